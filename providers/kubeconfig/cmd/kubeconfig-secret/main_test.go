// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/yaml"

	"mcr.dev/core/envtest"
	corekubeconfig "mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kubeconfig"
	"mcr.dev/providers/kubeconfig/enroll"
)

// TestEnrollsTwoMembers runs the command against two members of a fleet and checks that the
// Secrets it writes hold least-privilege credentials that the provider, with its hardened
// defaults, engages; and that running it again rotates the token.
func TestEnrollsTwoMembers(t *testing.T) {
	fleet := envtest.StartForTest(t, "hub", "east", "west")
	dir := t.TempDir()
	kubeconfigFile := func(m string) string {
		path := filepath.Join(dir, m+".kubeconfig")
		if err := os.WriteFile(path, fleet.Member(m).Kubeconfig(), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	hubFile := kubeconfigFile("hub")
	hub := kubernetes.NewForConfigOrDie(fleet.Member("hub").Config())
	if _, err := hub.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kubeconfig.DefaultNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	enrollMember := func(t *testing.T, m string, extra ...string) {
		t.Helper()
		var out, errOut bytes.Buffer
		args := append([]string{"--name", m, "--member-kubeconfig", kubeconfigFile(m), "--host-kubeconfig", hubFile}, extra...)
		if err := run(t.Context(), args, &out, &errOut); err != nil {
			t.Fatalf("kubeconfig-secret %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		}
		if !strings.Contains(out.String(), "Secret "+kubeconfig.DefaultNamespace+"/"+m+" written") {
			t.Errorf("unexpected output: %q", out.String())
		}
	}
	// An existing ClusterRole on west to bind with --cluster-role. (The bootstrap "view" role is
	// aggregated by kube-controller-manager, which envtest does not run.)
	westAdmin := kubernetes.NewForConfigOrDie(fleet.Member("west").Config())
	if _, err := westAdmin.RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	enrollMember(t, "east")
	enrollMember(t, "west", "--cluster-role", "pod-reader")

	tokens := map[string]string{}
	for _, m := range []string{"east", "west"} {
		s, err := hub.CoreV1().Secrets(kubeconfig.DefaultNamespace).Get(t.Context(), m, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Secret of %s: %v", m, err)
		}
		if s.Labels[kubeconfig.DefaultSecretLabel] != "true" {
			t.Errorf("Secret of %s lacks the provider's label: %v", m, s.Labels)
		}
		// The hardened default policy accepts it: inline CA and token only.
		cfg, err := corekubeconfig.Load(s.Data[kubeconfig.DefaultSecretKey], corekubeconfig.Policy{})
		if err != nil {
			t.Fatalf("Secret of %s: %v", m, err)
		}
		if cfg.Host != fleet.Member(m).Host() || cfg.BearerToken == "" {
			t.Errorf("Secret of %s points at %q", m, cfg.Host)
		}
		tokens[m] = cfg.BearerToken
		cs := kubernetes.NewForConfigOrDie(cfg)
		if _, err := cs.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{}); err != nil {
			t.Errorf("%s: the credentials cannot list namespaces: %v", m, err)
		}
		// Least privilege: no writes, no Secrets.
		for _, attr := range []authorizationv1.ResourceAttributes{
			{Verb: "create", Resource: "configmaps", Namespace: "default"},
			{Verb: "list", Resource: "secrets"},
			{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"},
		} {
			review, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(t.Context(),
				&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attr}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if review.Status.Allowed {
				t.Errorf("%s: the credentials may %s %s", m, attr.Verb, attr.Resource)
			}
		}
	}
	// --cluster-role pod-reader was bound on west only.
	canListPods := func(m string) bool {
		cfg, _ := corekubeconfig.Load(mustSecretData(t, hub, m), corekubeconfig.Policy{})
		_, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{})
		return err == nil
	}
	if canListPods("east") || !canListPods("west") {
		t.Errorf("pod-reader binding: east can list pods %v (want false), west %v (want true)", canListPods("east"), canListPods("west"))
	}

	// The provider engages both with its defaults.
	p, err := kubeconfig.New(fleet.Member("hub").Config(), kubeconfig.Options{Options: kit.Options{CacheSyncTimeout: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	aware := &engagements{seen: map[multicluster.ClusterName][]cluster.Cluster{}}
	run := providertest.RunInBackground(t, "provider Start", time.Minute, func(ctx context.Context) error { return p.Start(ctx, aware) })
	defer run.Stop()
	aware.wait(t, "east", 1)
	aware.wait(t, "west", 1)

	// Enrolling again rotates the token, of the same ServiceAccount: the engaged cluster takes it
	// in place, with a CredentialsRotated Event on the Secret and no new engagement.
	enrollMember(t, "east")
	rotated, err := corekubeconfig.Load(mustSecretData(t, hub, "east"), corekubeconfig.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if rotated.BearerToken == tokens["east"] {
		t.Fatal("enrolling again did not mint a new token")
	}
	providertest.Eventually(t, time.Minute, "east's credentials replaced in place", func() error {
		events, err := hub.EventsV1().Events(kubeconfig.DefaultNamespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason == kit.ReasonCredentialsRotated && e.Regarding.Name == "east" && strings.Contains(e.Note, "in place") {
				return nil
			}
		}
		return errors.New("no CredentialsRotated Event in place on Secret east")
	})
	aware.mu.Lock()
	n := len(aware.seen["east"])
	aware.mu.Unlock()
	if n != 1 {
		t.Errorf("east engaged %d times, want 1: a new token of the same ServiceAccount is taken in place", n)
	}
}

func TestPrintsSecretWithoutWritingIt(t *testing.T) {
	fleet := envtest.StartForTest(t, "solo")
	path := filepath.Join(t.TempDir(), "solo.kubeconfig")
	if err := os.WriteFile(path, fleet.Member("solo").Kubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rules, []byte("- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	err := run(t.Context(), []string{"--name", "solo", "--member-kubeconfig", path, "--print", "--rules-file", rules,
		"--namespace", "fleet", "--label", kubeconfig.UpstreamSecretLabel, "--server", "https://solo.example:6443"}, &out, &errOut)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	var s corev1.Secret
	if err := yaml.UnmarshalStrict(out.Bytes(), &s); err != nil {
		t.Fatalf("output is not a Secret: %v\n%s", err, out.String())
	}
	if s.Namespace != "fleet" || s.Labels[kubeconfig.UpstreamSecretLabel] != "true" || s.Annotations[enroll.TokenExpirationAnnotation] == "" {
		t.Errorf("unexpected Secret metadata: %+v", s.ObjectMeta)
	}
	cfg, err := corekubeconfig.Load(s.Data[kubeconfig.DefaultSecretKey], corekubeconfig.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://solo.example:6443" {
		t.Errorf("server override ignored: %q", cfg.Host)
	}
	// The rules file replaced the default rules: configmaps yes, namespaces no.
	admin := kubernetes.NewForConfigOrDie(fleet.Member("solo").Config())
	role, err := admin.RbacV1().ClusterRoles().Get(t.Context(), enroll.DefaultServiceAccountNamespace+":"+enroll.DefaultServiceAccountName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(role.Rules) != 1 || role.Rules[0].Resources[0] != "configmaps" {
		t.Errorf("ClusterRole rules = %+v, want the rules file's", role.Rules)
	}
}

func TestRequiresName(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(t.Context(), nil, &out, &errOut); err == nil || !strings.Contains(err.Error(), "--name") {
		t.Errorf("run without --name = %v", err)
	}
}

func mustSecretData(t *testing.T, hub kubernetes.Interface, name string) []byte {
	t.Helper()
	s, err := hub.CoreV1().Secrets(kubeconfig.DefaultNamespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.Data[kubeconfig.DefaultSecretKey]
}

// engagements records the clusters engaged under each name.
type engagements struct {
	mu   sync.Mutex
	seen map[multicluster.ClusterName][]cluster.Cluster
}

func (e *engagements) Engage(_ context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seen[name] = append(e.seen[name], cl)
	return nil
}

// wait waits until name was engaged n times and returns the last cluster.
func (e *engagements) wait(t *testing.T, name multicluster.ClusterName, n int) cluster.Cluster {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		e.mu.Lock()
		got := e.seen[name]
		e.mu.Unlock()
		if len(got) >= n {
			return got[len(got)-1]
		}
		if time.Now().After(deadline) {
			t.Fatal(errors.New(fmt.Sprint("cluster ", name, " engaged ", len(got), " times, want ", n)))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
