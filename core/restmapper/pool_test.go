// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package restmapper_test

import (
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/envtest"
	"mcr.dev/core/restmapper"
)

// builds records every mapper a Pool builds and the config it was built from.
type builds struct {
	mu      sync.Mutex
	configs []*rest.Config
}

func (b *builds) newMapper(cfg *rest.Config, hc *http.Client) (meta.RESTMapper, error) {
	b.mu.Lock()
	b.configs = append(b.configs, rest.CopyConfig(cfg))
	b.mu.Unlock()
	return apiutil.NewDynamicRESTMapper(cfg, hc)
}

func (b *builds) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.configs)
}

// tenantConfig returns the config of a ServiceAccount of its own in namespace ns of m, allowed
// to read ConfigMaps there and nothing else: a cluster with credentials of its own on a shared
// endpoint.
func tenantConfig(t *testing.T, m *envtest.Member, ns string) *rest.Config {
	t.Helper()
	kc, err := m.ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{
		Namespace:    ns,
		Name:         "tenant",
		ClusterRules: []rbacv1.PolicyRule{},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"},
		}},
	})
	if err != nil {
		t.Fatalf("minting credentials in %s/%s: %v", m.Name(), ns, err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func newCluster(t *testing.T, cfg *rest.Config, pool *restmapper.Pool) cluster.Cluster {
	t.Helper()
	cl, err := cluster.New(cfg, pool.ClusterOption())
	if err != nil {
		t.Fatalf("cluster.New: %v", err)
	}
	return cl
}

var (
	configMaps  = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	deployments = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
)

func TestClustersOfOneEndpointShareOneMapper(t *testing.T) {
	var b builds
	pool := restmapper.NewPool(restmapper.Options{NewMapper: b.newMapper})
	a := fleet.Member("a")
	one := newCluster(t, tenantConfig(t, a, "share-one"), pool)
	two := newCluster(t, tenantConfig(t, a, "share-two"), pool)
	other := newCluster(t, tenantConfig(t, fleet.Member("b"), "share-one"), pool)

	if got := b.count(); got != 2 {
		t.Errorf("mappers built for two clusters of member a and one of member b: %d, want 2", got)
	}
	if got := pool.Endpoints(); got != 2 {
		t.Errorf("Endpoints() = %d, want 2", got)
	}
	if got := pool.Clusters(a.Config()); got != 2 {
		t.Errorf("Clusters(member a) = %d, want 2", got)
	}
	for i, cfg := range b.configs {
		if cfg.BearerToken != "" || cfg.BearerTokenFile != "" || len(cfg.KeyData) > 0 || cfg.ExecProvider != nil || cfg.Password != "" {
			t.Errorf("shared mapper %d was built from a config holding credentials", i)
		}
	}
	// Each cluster maps kinds through the shared mapper (discovering with a tenant's token)
	// and reads its own namespace with its own credentials.
	for name, c := range map[string]struct {
		cl cluster.Cluster
		ns string
	}{"one": {one, "share-one"}, "two": {two, "share-two"}, "other": {other, "share-one"}} {
		m, err := c.cl.GetRESTMapper().RESTMapping(deployments.GroupKind(), deployments.Version)
		if err != nil || m.Resource.Resource != "deployments" {
			t.Errorf("%s: mapping Deployment: %v, %v", name, m, err)
		}
		var cms corev1.ConfigMapList
		if err := c.cl.GetAPIReader().List(t.Context(), &cms, client.InNamespace(c.ns)); err != nil {
			t.Errorf("%s: listing its own ConfigMaps: %v", name, err)
		}
		if err := c.cl.GetAPIReader().List(t.Context(), &cms, client.InNamespace("default")); err == nil {
			t.Errorf("%s: listing ConfigMaps of namespace default succeeded: the cluster borrowed credentials", name)
		}
	}
}

func TestConfigsThatCannotShareGetTheirOwnMapper(t *testing.T) {
	base := tenantConfig(t, fleet.Member("a"), "own-mapper")
	for name, change := range map[string]func(*rest.Config){
		"insecure":       func(c *rest.Config) { c.Insecure, c.CAData, c.CAFile = true, nil, "" },
		"proxy":          func(c *rest.Config) { c.Proxy = http.ProxyFromEnvironment },
		"wrap-transport": func(c *rest.Config) { c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return rt } },
	} {
		t.Run(name, func(t *testing.T) {
			var b builds
			pool := restmapper.NewPool(restmapper.Options{NewMapper: b.newMapper})
			cfg := rest.CopyConfig(base)
			change(cfg)
			newCluster(t, cfg, pool)
			newCluster(t, cfg, pool)
			if got := b.count(); got != 2 {
				t.Errorf("mappers built for two clusters: %d, want one each", got)
			}
			if got := pool.Endpoints(); got != 0 {
				t.Errorf("Endpoints() = %d, want 0", got)
			}
			for i, c := range b.configs {
				if c.BearerToken == "" {
					t.Errorf("own mapper %d was not built from the cluster's own config", i)
				}
			}
		})
	}
}

// TestDiscoveryOutlivesRevokedCredentials: the newest cluster of an endpoint has credentials
// the server refuses; discovery for the shared mapper goes on with an older cluster's.
func TestDiscoveryOutlivesRevokedCredentials(t *testing.T) {
	a := fleet.Member("a")
	good := tenantConfig(t, a, "revoked")
	revoked := rest.CopyConfig(good)
	revoked.BearerToken = "not-a-token-the-server-knows"

	t.Run("alone", func(t *testing.T) {
		pool := restmapper.NewPool(restmapper.Options{})
		cl := newCluster(t, revoked, pool)
		if _, err := cl.GetRESTMapper().RESTMapping(deployments.GroupKind(), deployments.Version); err == nil {
			t.Fatal("mapping through refused credentials only succeeded")
		}
	})
	t.Run("with an older cluster", func(t *testing.T) {
		pool := restmapper.NewPool(restmapper.Options{})
		older := newCluster(t, good, pool)
		newest := newCluster(t, revoked, pool)
		if _, err := newest.GetRESTMapper().RESTMapping(deployments.GroupKind(), deployments.Version); err != nil {
			t.Errorf("mapping Deployment from the cluster with refused credentials: %v", err)
		}
		if _, err := older.GetRESTMapper().RESTMapping(configMaps.GroupKind(), configMaps.Version); err != nil {
			t.Errorf("mapping ConfigMap from the cluster with good credentials: %v", err)
		}
	})
}

// TestMapperReleasedWithItsLastCluster: an endpoint's mapper lives as long as a cluster uses
// it, and a cluster built afterwards gets a new one.
func TestMapperReleasedWithItsLastCluster(t *testing.T) {
	var b builds
	pool := restmapper.NewPool(restmapper.Options{NewMapper: b.newMapper})
	cfg := tenantConfig(t, fleet.Member("b"), "released")
	func() {
		one, two := newCluster(t, cfg, pool), newCluster(t, cfg, pool)
		if _, err := one.GetRESTMapper().RESTMapping(configMaps.GroupKind()); err != nil {
			t.Fatal(err)
		}
		runtime.KeepAlive(two)
	}()
	if got := pool.Endpoints(); got != 1 {
		t.Fatalf("Endpoints() with two live clusters = %d, want 1", got)
	}
	deadline := time.Now().Add(30 * time.Second)
	for pool.Endpoints() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the endpoint's mapper outlived its clusters: Endpoints() = %d", pool.Endpoints())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	kept := newCluster(t, cfg, pool)
	if got := b.count(); got != 2 {
		t.Errorf("mappers built: %d, want 2 (one per life of the endpoint)", got)
	}
	if _, err := kept.GetRESTMapper().RESTMapping(configMaps.GroupKind()); err != nil {
		t.Errorf("mapping through the new mapper: %v", err)
	}
}

func TestMapperProviderRefusesNilClient(t *testing.T) {
	pool := restmapper.NewPool(restmapper.Options{})
	if _, err := pool.MapperProvider(fleet.Member("a").Config(), nil); err == nil {
		t.Error("MapperProvider without an HTTP client: no error")
	}
}
