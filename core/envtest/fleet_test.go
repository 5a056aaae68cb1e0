// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"mcr.dev/core/envtest"
)

// The tests below share one fleet: every apiserver start costs seconds of CPU on a small
// machine, and isolation between members is exactly what lets them share it.
func TestFleet(t *testing.T) {
	fleet := envtest.StartForTest(t, "east", "west")

	t.Run("MembersInOrder", func(t *testing.T) {
		var names []string
		for _, m := range fleet.Members() {
			names = append(names, m.Name())
		}
		if got, want := strings.Join(names, ","), "east,west"; got != want {
			t.Fatalf("Members() = %s, want %s", got, want)
		}
		if m := fleet.Member("west"); m == nil || m.Name() != "west" {
			t.Fatalf("Member(west) = %v", m)
		}
		if m := fleet.Member("north"); m != nil {
			t.Fatalf("Member(north) = %v, want nil", m)
		}
		if fleet.Member("east").Host() == fleet.Member("west").Host() {
			t.Fatalf("east and west share the address %s", fleet.Member("east").Host())
		}
	})

	t.Run("MembersAreIsolated", func(t *testing.T) {
		ctx := t.Context()
		east := clientset(t, fleet.Member("east").Config())
		west := clientset(t, fleet.Member("west").Config())
		createConfigMap(t, east, "default", "only-in-east")

		if _, err := east.CoreV1().ConfigMaps("default").Get(ctx, "only-in-east", metav1.GetOptions{}); err != nil {
			t.Fatalf("east lost its own configmap: %v", err)
		}
		_, err := west.CoreV1().ConfigMaps("default").Get(ctx, "only-in-east", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("west sees east's configmap (err=%v): members share an etcd prefix", err)
		}
	})

	t.Run("MembersHaveDistinctCAs", func(t *testing.T) {
		// A client for west that trusts east's CA must fail TLS verification, as it would
		// between two real clusters.
		cfg := fleet.Member("west").Config()
		cfg.CAData = fleet.Member("east").Config().CAData
		_, err := clientset(t, cfg).Discovery().ServerVersion()
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("west accepted with east's CA, err=%v", err)
		}
	})

	t.Run("Version", func(t *testing.T) {
		for _, m := range fleet.Members() {
			v, err := clientset(t, m.Config()).Discovery().ServerVersion()
			if err != nil {
				t.Fatalf("%s: /version: %v", m.Name(), err)
			}
			if v.GitVersion != envtest.KubernetesVersion {
				t.Fatalf("%s: /version reports %q, want %q", m.Name(), v.GitVersion, envtest.KubernetesVersion)
			}
		}
	})

	t.Run("AdminKubeconfig", func(t *testing.T) {
		m := fleet.Member("west")
		raw, err := clientcmd.Load(m.Kubeconfig())
		if err != nil {
			t.Fatalf("parsing kubeconfig: %v", err)
		}
		if raw.CurrentContext != "west" || raw.Contexts["west"] == nil {
			t.Fatalf("kubeconfig context is %q (contexts %v), want west", raw.CurrentContext, raw.Contexts)
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(m.Kubeconfig())
		if err != nil {
			t.Fatalf("kubeconfig to rest.Config: %v", err)
		}
		if cfg.Host != m.Host() {
			t.Fatalf("kubeconfig server %s, want %s", cfg.Host, m.Host())
		}
		// Cluster-scoped writes need admin rights.
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "admin-was-here"}}
		if _, err := clientset(t, cfg).CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
			t.Fatalf("admin kubeconfig cannot create a namespace: %v", err)
		}
	})

	t.Run("ConfigIsACopy", func(t *testing.T) {
		m := fleet.Member("east")
		cfg := m.Config()
		cfg.Host = "https://example.invalid"
		cfg.CAData[0] = 'X'
		if got := m.Config(); got.Host != m.Host() || got.CAData[0] == 'X' {
			t.Fatalf("changing a returned Config changed the member's")
		}
	})

	t.Run("ServiceAccountKubeconfig", func(t *testing.T) {
		testServiceAccountKubeconfig(t, fleet.Member("east"))
	})

	t.Run("InstallCRDs", func(t *testing.T) {
		testInstallCRDs(t, fleet.Member("east"))
	})

	t.Run("StopStart", func(t *testing.T) {
		testStopStart(t, fleet)
	})

	t.Run("AddRemoveMember", func(t *testing.T) {
		testAddRemoveMember(t, fleet)
	})
}

func testServiceAccountKubeconfig(t *testing.T, m *envtest.Member) {
	ctx := t.Context()
	admin := clientset(t, m.Config())
	createConfigMap(t, admin, "default", "visible")

	t.Run("DefaultRules", func(t *testing.T) {
		kc, err := m.ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{})
		if err != nil {
			t.Fatalf("ServiceAccountKubeconfig: %v", err)
		}
		sa := clientsetFromKubeconfig(t, kc)
		if _, err := sa.CoreV1().ConfigMaps("default").Get(ctx, "visible", metav1.GetOptions{}); err != nil {
			t.Fatalf("default rules should allow reading configmaps: %v", err)
		}
		if _, err := sa.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatalf("default rules should allow listing namespaces: %v", err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "written-by-sa"}}
		if _, err := sa.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("default rules allowed creating a configmap (err=%v), want Forbidden", err)
		}
		if _, err := sa.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("default rules allowed listing secrets (err=%v), want Forbidden", err)
		}
		if got := tokenLifetime(t, kc); got != time.Hour {
			t.Fatalf("token lifetime %v, want the default 1h", got)
		}
	})

	t.Run("CustomRules", func(t *testing.T) {
		kc, err := m.ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{
			Namespace:    "team-a",
			Name:         "writer",
			ClusterRules: []rbacv1.PolicyRule{},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create", "get"},
			}},
			TokenExpiration: 20 * time.Minute,
		})
		if err != nil {
			t.Fatalf("ServiceAccountKubeconfig: %v", err)
		}
		sa := clientsetFromKubeconfig(t, kc)
		createConfigMap(t, sa, "team-a", "written-by-sa")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}}
		if _, err := sa.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("namespaced rules allowed a write in another namespace (err=%v), want Forbidden", err)
		}
		if _, err := sa.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("empty ClusterRules allowed listing namespaces (err=%v), want Forbidden", err)
		}
		if got := tokenLifetime(t, kc); got != 20*time.Minute {
			t.Fatalf("token lifetime %v, want 20m", got)
		}
	})

	t.Run("Idempotent", func(t *testing.T) {
		// A second call with other rules updates the RBAC objects instead of failing.
		kc, err := m.ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{
			ClusterRules: []rbacv1.PolicyRule{{
				APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"},
			}},
		})
		if err != nil {
			t.Fatalf("second ServiceAccountKubeconfig: %v", err)
		}
		sa := clientsetFromKubeconfig(t, kc)
		if _, err := sa.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatalf("updated rules should allow listing secrets: %v", err)
		}
		if _, err := sa.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("old rules still apply (err=%v), want Forbidden", err)
		}
	})

	t.Run("TooShortExpiration", func(t *testing.T) {
		_, err := m.ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{TokenExpiration: time.Minute})
		if err == nil {
			t.Fatalf("a one-minute token was accepted; kube-apiserver requires at least 10 minutes")
		}
	})
}

func testStopStart(t *testing.T, fleet *envtest.Fleet) {
	ctx := t.Context()
	m, err := fleet.AddMember(ctx, "flaky")
	if err != nil {
		t.Fatalf("AddMember: %v", err)
	}
	host := m.Host()
	cfg := m.Config()
	cfg.Timeout = 5 * time.Second
	cs := clientset(t, cfg) // created before the outage and kept across it
	createConfigMap(t, cs, "default", "survivor")

	if err := m.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if m.Running() {
		t.Fatalf("Running() = true after Stop")
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "survivor", metav1.GetOptions{}); err == nil {
		t.Fatalf("a request to a stopped member succeeded")
	}
	if err := m.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}

	if err := m.Start(ctx); err != nil {
		t.Fatalf("Start after Stop: %v", err)
	}
	if !m.Running() {
		t.Fatalf("Running() = false after Start")
	}
	if m.Host() != host {
		t.Fatalf("member moved from %s to %s", host, m.Host())
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "survivor", metav1.GetOptions{}); err != nil {
		t.Fatalf("data or client lost across the restart: %v", err)
	}
	if err := m.Start(ctx); err != nil {
		t.Fatalf("Start of a running member: %v", err)
	}
}

func testAddRemoveMember(t *testing.T, fleet *envtest.Fleet) {
	ctx := t.Context()
	late, err := fleet.AddMember(ctx, "late")
	if err != nil {
		t.Fatalf("AddMember: %v", err)
	}
	if fleet.Member("late") != late {
		t.Fatalf("Member(late) does not return the added member")
	}
	createConfigMap(t, clientset(t, late.Config()), "default", "first-life")

	if _, err := fleet.AddMember(ctx, "late"); err == nil {
		t.Fatalf("AddMember accepted a duplicate name")
	}
	if _, err := fleet.AddMember(ctx, "Not_A_Label"); err == nil {
		t.Fatalf("AddMember accepted an invalid name")
	}

	if err := fleet.RemoveMember("late"); err != nil {
		t.Fatalf("RemoveMember: %v", err)
	}
	if fleet.Member("late") != nil {
		t.Fatalf("removed member is still listed")
	}
	if late.Running() {
		t.Fatalf("removed member still runs")
	}
	if err := late.Start(ctx); err == nil {
		t.Fatalf("a removed member started again")
	}
	if err := fleet.RemoveMember("late"); !errors.Is(err, envtest.ErrMemberNotFound) {
		t.Fatalf("second RemoveMember: err=%v, want ErrMemberNotFound", err)
	}

	again, err := fleet.AddMember(ctx, "late")
	if err != nil {
		t.Fatalf("re-adding a removed name: %v", err)
	}
	_, err = clientset(t, again.Config()).CoreV1().ConfigMaps("default").Get(ctx, "first-life", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("a re-added member sees its predecessor's data (err=%v), want NotFound", err)
	}
}

func TestMissingBinaries(t *testing.T) {
	empty := t.TempDir()
	check := func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, envtest.ErrBinariesNotFound) {
			t.Fatalf("err = %v, want ErrBinariesNotFound", err)
		}
		for _, want := range []string{"make envtest", "kube-apiserver", envtest.KubernetesVersion, envtest.AssetsEnv} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not mention %q", err, want)
			}
		}
	}
	t.Run("BinaryDir", func(t *testing.T) {
		_, err := envtest.Start(t.Context(), envtest.Options{BinaryDir: empty})
		check(t, err)
	})
	t.Run("AssetsEnv", func(t *testing.T) {
		t.Setenv(envtest.AssetsEnv, empty)
		_, err := envtest.Start(t.Context(), envtest.Options{Members: []string{"a"}})
		check(t, err)
	})
}

func TestInvalidOptions(t *testing.T) {
	dir := t.TempDir() // never reached: options are checked before binaries
	for name, opts := range map[string]envtest.Options{
		"InvalidName":     {Members: []string{"UPPER"}},
		"DuplicateName":   {Members: []string{"a", "a"}},
		"ManagedFlag":     {APIServerFlags: map[string]string{"etcd-prefix": "/x"}},
		"DashedFlag":      {APIServerFlags: map[string]string{"--v": "2"}},
		"ManagedEtcdFlag": {EtcdFlags: map[string]string{"data-dir": "/tmp"}},
	} {
		t.Run(name, func(t *testing.T) {
			opts.BinaryDir = dir
			_, err := envtest.Start(t.Context(), opts)
			if err == nil || errors.Is(err, envtest.ErrBinariesNotFound) {
				t.Fatalf("Start(%+v) err = %v, want an options error", opts, err)
			}
		})
	}
}

func clientset(t *testing.T, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("creating clientset: %v", err)
	}
	return cs
}

func clientsetFromKubeconfig(t *testing.T, kubeconfig []byte) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatalf("parsing kubeconfig: %v", err)
	}
	return clientset(t, cfg)
}

func createConfigMap(t *testing.T, cs kubernetes.Interface, namespace, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if _, err := cs.CoreV1().ConfigMaps(namespace).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating configmap %s/%s: %v", namespace, name, err)
	}
}

// tokenLifetime reads exp-iat from the bearer token of a kubeconfig. The signature is the
// apiserver's business; here only the requested lifetime matters.
func tokenLifetime(t *testing.T, kubeconfig []byte) time.Duration {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatalf("parsing kubeconfig: %v", err)
	}
	parts := strings.Split(cfg.BearerToken, ".")
	if len(parts) != 3 {
		t.Fatalf("kubeconfig token is not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("decoding token payload: %v", err)
	}
	var claims struct{ Exp, Iat int64 }
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatalf("parsing token claims: %v", err)
	}
	return time.Duration(claims.Exp-claims.Iat) * time.Second
}
