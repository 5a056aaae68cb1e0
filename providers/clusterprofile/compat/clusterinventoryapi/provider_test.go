// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterinventoryapi_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"

	"mcr.dev/core/envtest"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterprofile/compat/clusterinventoryapi"
	"mcr.dev/providers/clusterprofile/compat/clusterinventoryapi/kubeconfigstrategy"
)

// New refuses the options upstream's strategy factory refuses, and the one option mcr's
// provider has no counterpart for.
func TestNewRefusesOptionsItCannotHonour(t *testing.T) {
	valid := &access.Config{Providers: []access.Provider{{Name: "token", ExecConfig: execConfig("/bin/true")}}}
	for name, tc := range map[string]struct {
		opts clusterinventoryapi.Options
		want string
	}{
		"no strategy": {
			opts: clusterinventoryapi.Options{},
			want: "either AccessProvider or Secret must be provided",
		},
		"both strategies": {
			opts: clusterinventoryapi.Options{KubeconfigStrategyOption: kubeconfigstrategy.Option{
				Secret:              &kubeconfigstrategy.SecretStrategyOption{ConsumerName: "c"},
				CredentialsProvider: &kubeconfigstrategy.CredentialsProviderOption{Provider: valid}, //nolint:staticcheck // the deprecated name is what is tested
			}},
			want: "only one of AccessProvider or Secret",
		},
		"both names of the access-provider strategy": {
			opts: clusterinventoryapi.Options{KubeconfigStrategyOption: kubeconfigstrategy.Option{
				AccessProvider:      &kubeconfigstrategy.AccessProviderOption{Provider: valid},
				CredentialsProvider: &kubeconfigstrategy.CredentialsProviderOption{Provider: valid}, //nolint:staticcheck // the deprecated name is what is tested
			}},
			want: "only one of AccessProvider or CredentialsProvider",
		},
		"AccessProvider and Secret": {
			opts: clusterinventoryapi.Options{KubeconfigStrategyOption: kubeconfigstrategy.Option{
				Secret:         &kubeconfigstrategy.SecretStrategyOption{ConsumerName: "c"},
				AccessProvider: &kubeconfigstrategy.AccessProviderOption{Provider: valid},
			}},
			want: "only one of AccessProvider or Secret",
		},
		"AccessProvider without provider": {
			opts: clusterinventoryapi.Options{KubeconfigStrategyOption: kubeconfigstrategy.Option{
				AccessProvider: &kubeconfigstrategy.AccessProviderOption{},
			}},
			want: "Provider must be set",
		},
		"Secret without consumer": {
			opts: clusterinventoryapi.Options{KubeconfigStrategyOption: kubeconfigstrategy.Option{
				Secret: &kubeconfigstrategy.SecretStrategyOption{},
			}},
			want: "ConsumerName must be set",
		},
		"CredentialsProvider without provider": {
			opts: clusterinventoryapi.Options{KubeconfigStrategyOption: kubeconfigstrategy.Option{
				CredentialsProvider: &kubeconfigstrategy.CredentialsProviderOption{}, //nolint:staticcheck // the deprecated name is what is tested
			}},
			want: "Provider must be set",
		},
		"CredentialsProvider without command": {
			opts: clusterinventoryapi.Options{KubeconfigStrategyOption: kubeconfigstrategy.Option{
				CredentialsProvider: &kubeconfigstrategy.CredentialsProviderOption{Provider: &access.Config{ //nolint:staticcheck // the deprecated name is what is tested
					Providers: []access.Provider{{Name: "token", ExecConfig: execConfig("")}},
				}},
			}},
			want: "execConfig.command is empty",
		},
		"NewCluster": {
			opts: clusterinventoryapi.Options{
				KubeconfigStrategyOption: kubeconfigstrategy.Option{Secret: &kubeconfigstrategy.SecretStrategyOption{ConsumerName: "c"}},
				NewCluster: func(_ context.Context, _ *v1alpha1.ClusterProfile, cfg *rest.Config, opts ...cluster.Option) (cluster.Cluster, error) {
					return cluster.New(cfg, opts...)
				},
			},
			want: "Options.NewCluster is not supported",
		},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := clusterinventoryapi.New(tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, %v; want an error containing %q", p, err, tc.want)
			}
		})
	}
}

// Before SetupWithManager the provider serves nothing, and Start waits for it or for its
// context.
func TestBeforeSetupWithManager(t *testing.T) {
	p, err := clusterinventoryapi.New(clusterinventoryapi.Options{KubeconfigStrategyOption: kubeconfigstrategy.Option{
		Secret: &kubeconfigstrategy.SecretStrategyOption{ConsumerName: "c"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	providertest.CheckNotSetUp(t, p, "ns/east", func() error { return p.SetupWithManager(nil) })
}

// A program written for multicluster-runtime's cluster-inventory-api provider runs as its
// documentation says, with either strategy: New, mcmanager.New, an index registered before
// SetupWithManager, SetupWithManager, a controller. A ClusterProfile is engaged under
// "<namespace>/<name>" once ControlPlaneHealthy is True, the controller reconciles in it, the
// index reaches it, and deleting the profile disengages it.
func TestUpstreamUsage(t *testing.T) {
	fleet := envtest.StartForTest(t, "hub", "member")
	ctx := t.Context()
	hub, member := fleet.Member("hub"), fleet.Member("member")
	installCRD(t, hub.Config())
	scheme := runtime.NewScheme()
	sb := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, v1alpha1.AddToScheme)
	if err := sb.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	hubClient, err := client.New(hub.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	memberClient, err := client.New(member.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	const consumer = "cluster-inventory-api-consumer"
	tests := []struct {
		name string
		// setUp prepares the hub for a profile "east" in ns reaching the member, and returns
		// the strategy and the profile's status apart from its conditions.
		setUp func(t *testing.T, ns string) (kubeconfigstrategy.Option, v1alpha1.ClusterProfileStatus)
	}{{
		name: "Secret",
		setUp: func(t *testing.T, ns string) (kubeconfigstrategy.Option, v1alpha1.ClusterProfileStatus) {
			secret := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "east-kubeconfig", Labels: map[string]string{
					kubeconfigstrategy.SecretLabelKeyClusterInventoryConsumer: consumer,
					kubeconfigstrategy.SecretLabelKeyClusterProfile:           "east",
				}},
				Data: map[string][]byte{kubeconfigstrategy.SecretDataKeyKubeConfig: member.Kubeconfig()},
			}
			if err := hubClient.Create(ctx, secret); err != nil {
				t.Fatal(err)
			}
			return kubeconfigstrategy.Option{Secret: &kubeconfigstrategy.SecretStrategyOption{ConsumerName: consumer}}, v1alpha1.ClusterProfileStatus{}
		},
	}, {
		name: "CredentialsProvider",
		setUp: func(t *testing.T, _ string) (kubeconfigstrategy.Option, v1alpha1.ClusterProfileStatus) {
			// The operator's provider file names an exec plugin that hands out a token of a
			// ServiceAccount of the member; the profile names the plugin and the member's
			// endpoint.
			file := providerFile(t, memberToken(t, member))
			providers, err := access.NewFromFile(file)
			if err != nil {
				t.Fatal(err)
			}
			status := v1alpha1.ClusterProfileStatus{AccessProviders: []v1alpha1.AccessProvider{{
				Name:    "token",
				Cluster: clientcmdv1.Cluster{Server: member.Host(), CertificateAuthorityData: member.Config().CAData},
			}}}
			return kubeconfigstrategy.Option{CredentialsProvider: &kubeconfigstrategy.CredentialsProviderOption{Provider: providers}}, status //nolint:staticcheck // the deprecated name is what is tested
		},
	}, {
		// Upstream main's name of the same strategy (multicluster-runtime PR 164).
		name: "AccessProvider",
		setUp: func(t *testing.T, _ string) (kubeconfigstrategy.Option, v1alpha1.ClusterProfileStatus) {
			providers, err := access.NewFromFile(providerFile(t, memberToken(t, member)))
			if err != nil {
				t.Fatal(err)
			}
			status := v1alpha1.ClusterProfileStatus{AccessProviders: []v1alpha1.AccessProvider{{
				Name:    "token",
				Cluster: clientcmdv1.Cluster{Server: member.Host(), CertificateAuthorityData: member.Config().CAData},
			}}}
			return kubeconfigstrategy.Option{AccessProvider: &kubeconfigstrategy.AccessProviderOption{Provider: providers}}, status
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns := "fleet-" + strings.ToLower(tc.name)
			for _, c := range []client.Client{hubClient, memberClient} {
				if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
					t.Fatal(err)
				}
			}
			strategy, status := tc.setUp(t, ns)

			provider, err := clusterinventoryapi.New(clusterinventoryapi.Options{KubeconfigStrategyOption: strategy})
			if err != nil {
				t.Fatal(err)
			}
			program := providertest.StartUpstreamProgram(t, hub.Config(), provider, mcmanager.Options{}, provider.SetupWithManager)

			if err := memberClient.Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget"},
				Data:       map[string]string{"color": "blue"},
			}); err != nil {
				t.Fatal(err)
			}
			profile := &v1alpha1.ClusterProfile{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "east"},
				Spec:       v1alpha1.ClusterProfileSpec{ClusterManager: v1alpha1.ClusterManager{Name: "test"}},
			}
			if err := hubClient.Create(ctx, profile); err != nil {
				t.Fatal(err)
			}
			// Not ready yet: the profile reaches the member but its control plane is not
			// reported healthy.
			profile.Status = status
			setHealthy(&profile.Status, metav1.ConditionFalse)
			if err := hubClient.Status().Update(ctx, profile); err != nil {
				t.Fatal(err)
			}
			name := multicluster.ClusterName(ns + "/east")
			time.Sleep(time.Second)
			if _, err := provider.Get(ctx, name); !errors.Is(err, multicluster.ErrClusterNotFound) {
				t.Fatalf("a profile whose ControlPlaneHealthy is False: Get = %v, want ErrClusterNotFound", err)
			}

			setHealthy(&profile.Status, metav1.ConditionTrue)
			if err := hubClient.Status().Update(ctx, profile); err != nil {
				t.Fatal(err)
			}
			program.WaitEngaged(t, name, member.Host(), ns, "widget", "blue")
			cl, err := provider.Get(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			// mcr's provider kit runs an exec plugin itself, through the config's transport;
			// client-go's exec configuration is never left in the engaged config.
			if cfg := cl.GetConfig(); cfg.ExecProvider != nil {
				t.Errorf("cluster %s: the engaged config keeps client-go's exec configuration", name)
			}
			// Its credentials live in the config's transport (as do those the kit refreshes in
			// place), never in the config's fields.
			if cfg := cl.GetConfig(); cfg.Transport == nil || cfg.BearerToken != "" {
				t.Errorf("cluster %s: the engaged config has no transport, or a token in its fields", name)
			}

			if err := hubClient.Delete(ctx, profile); err != nil {
				t.Fatal(err)
			}
			program.WaitDisengaged(t, name)
		})
	}
}

// execConfig is an exec plugin of an access provider.
func execConfig(command string) *clientcmdapi.ExecConfig {
	return &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: command}
}

func setHealthy(s *v1alpha1.ClusterProfileStatus, status metav1.ConditionStatus) {
	meta.SetStatusCondition(&s.Conditions, metav1.Condition{
		Type: v1alpha1.ClusterConditionControlPlaneHealthy, Status: status, Reason: "Probe", Message: "set by the test",
	})
}

// memberToken returns a token of a ServiceAccount of member that may read ConfigMaps.
func memberToken(t *testing.T, member *envtest.Member) string {
	t.Helper()
	data, err := member.ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{Name: "cluster-inventory-api"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerToken == "" {
		t.Fatal("ServiceAccount kubeconfig without a token")
	}
	return cfg.BearerToken
}

// providerFile writes an exec plugin that prints an ExecCredential with token and a KEP-5339
// provider file naming it "token", and returns the file's path.
func providerFile(t *testing.T, token string) string {
	t.Helper()
	dir := t.TempDir()
	plugin := filepath.Join(dir, "token-plugin")
	script := "#!/bin/sh\ncat <<'EOF'\n" +
		`{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {"token": "` + token + `"}}` +
		"\nEOF\n"
	if err := os.WriteFile(plugin, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "providers.json")
	content := fmt.Sprintf(`{"providers": [{"name": "token", "execConfig": {"apiVersion": "client.authentication.k8s.io/v1", "command": %q}}]}`, plugin)
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// installCRD installs the ClusterProfile CRD of the cluster-inventory-api module the provider
// is built with, and waits until it is established.
func installCRD(t *testing.T, cfg *rest.Config) {
	t.Helper()
	ctx := t.Context()
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-inventory-api").Output()
	if err != nil {
		t.Fatalf("locating sigs.k8s.io/cluster-inventory-api: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "bases", "multicluster.x-k8s.io_clusterprofiles.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := envtest.InstallCRDs(ctx, c, crd); err != nil {
		t.Fatal(err)
	}
}
