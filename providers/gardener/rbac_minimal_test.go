// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/gardener"
	"mcr.dev/providers/gardener/internal/frontproxy"
)

// rbacWindow bounds each step of the RBAC scenarios: long enough for the provider with every
// permission of the manifest (the control runs show it), short enough to keep the
// runs that must fail quick.
const rbacWindow = 20 * time.Second

var rbacRuns atomic.Int64

// TestEachPermissionIsNeeded runs the provider, in each topology, as a ServiceAccount that has
// the permissions of its manifest (config/rbac-garden.yaml, config/rbac-seed.yaml) less one,
// for each permission the manifest grants, and shows that something the provider does with all
// of them then fails: engaging a member that exists when it starts and one added later,
// recording their Events, counting a Warning recorded again for unchanged objects in its
// Event's series, and making no request the host refuses (a refused watch is logged).
// A run with the whole manifest shows the same steps succeed within the same window.
func TestEachPermissionIsNeeded(t *testing.T) {
	t.Parallel()
	// Shoots named "flapping" get a kubeconfig for the forwarder of their namespace.
	var mu sync.Mutex
	flapping := map[string]string{} // namespace -> server
	proxy, err := frontproxy.Start(frontproxy.Options{
		Garden: fleet.Member("host").Config(),
		Mint: func(ctx context.Context, shoot *gardencorev1beta1.Shoot, validity time.Duration) ([]byte, time.Time, error) {
			mu.Lock()
			server, ok := flapping[shoot.Namespace]
			mu.Unlock()
			if ok && shoot.Name == "flapping" {
				data, err := refusedKubeconfig(server)
				return data, time.Now().Add(validity), err
			}
			return minter.Mint(ctx, shoot, validity)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	flappingShoot := func(ns, server string) {
		mu.Lock()
		flapping[ns] = server
		mu.Unlock()
	}
	for _, tc := range []struct {
		manifest string
		scenario func(t *testing.T, cfg *rest.Config, user string) []string
	}{
		{"config/rbac-garden.yaml", func(t *testing.T, cfg *rest.Config, user string) []string {
			return gardenScenario(t, proxy, flappingShoot, cfg, user)
		}},
		{"config/rbac-seed.yaml", seedScenario},
	} {
		t.Run(tc.manifest, func(t *testing.T) {
			t.Parallel()
			providertest.RunPermissionTests(t, providertest.PermissionTest{
				Rules: providertest.MustManifestRules(t, tc.manifest, "ClusterRole"),
				Scenario: func(t *testing.T, c providertest.PermissionCase, _ string) []string {
					name := fmt.Sprintf("rbac-%d", rbacRuns.Add(1))
					cfg := providertest.ServiceAccountConfig(t, fleet.Member("host"), envtest.ServiceAccountOptions{Name: name, ClusterRules: c.Rules})
					return tc.scenario(t, cfg, "system:serviceaccount:mcr-system:"+name)
				},
			})
		})
	}
}

// startForRBAC starts a provider that may fail to start (its cache cannot sync without the
// permission taken away), as a trial whose steps wait at most rbacWindow.
func startForRBAC(t *testing.T, cfg *rest.Config, opts gardener.Options) (*gardener.Provider, *providertest.Trial) {
	t.Helper()
	opts.Logger = (&logBuffer{}).Logger()
	opts.CacheSyncTimeout = 10 * time.Second
	opts.RetryMinDelay, opts.RetryMaxDelay = 100*time.Millisecond, time.Second
	p, err := gardener.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p, providertest.StartTrial(t, p, rbacWindow, waitTimeout)
}

// memberSteps checks in trial that member name, present at start or added by add once the
// previous one is engaged, is engaged and has a ClusterEngaged Event, and then that flapping's
// Warnings make a series (providertest.FlappingMemberSteps); with all of that done, that no
// request of user was refused. It returns what failed.
func memberSteps(trial *providertest.Trial, kind, ns string, get func(name string) error, names []func() string, flap *envtest.Forwarder, flapping, user string) []string {
	ctx := context.Background()
	events := func(name string) func(reason string) int32 {
		return func(reason string) int32 {
			return providertest.EventCount(ctx, host, eventNamespace(ns), providertest.EventTarget{Kind: kind, Name: name}, reason)
		}
	}
	for _, next := range names {
		name := next()
		if !trial.Within(kind+" "+name+" engaged", func() bool { return get(name) == nil }) ||
			!trial.Within("Event ClusterEngaged on "+kind+" "+name, func() bool { return events(name)(kit.ReasonClusterEngaged) >= 1 }) {
			return trial.Failures()
		}
	}
	if providertest.FlappingMemberSteps(trial, flap, events(flapping)) {
		trial.WatchForbidden(user, 5*time.Second, &providertest.ProcessLogs)
	}
	return trial.Failures()
}

// gardenScenario: a Shoot that exists before the provider starts and one created once the first
// is engaged are engaged (adminkubeconfig), with ClusterEngaged Events, a flapping Shoot's
// Warnings make a series, and nothing is refused.
func gardenScenario(t *testing.T, proxy *frontproxy.Server, flappingShoot func(ns, server string), cfg *rest.Config, user string) []string {
	ns := newNamespace(t, "garden-rbac")
	usableShoot(t, ns, "before", "east")
	flap := envtest.StartForwarderForTest(t, fleet.Member("east"))
	flappingShoot(ns, flap.URL())
	usableShoot(t, ns, "flapping", "east")
	p, trial := startForRBAC(t, proxy.ConfigFor(cfg), gardener.Options{Topology: gardener.TopologyGarden, Namespaces: []string{ns}})
	get := func(name string) error {
		_, err := p.Get(t.Context(), gardener.ShootClusterName(ns, name))
		return err
	}
	names := []func() string{
		func() string { return "before" },
		func() string { usableShoot(t, ns, "after", "west"); return "after" },
	}
	return memberSteps(trial, "Shoot", ns, get, names, flap, "flapping", user)
}

// refusedKubeconfig returns a kubeconfig for server (a forwarder in front of east) with a token
// east refuses.
func refusedKubeconfig(server string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["shoot"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: fleet.Member("east").Config().CAData}
	cfg.AuthInfos["shoot"] = &clientcmdapi.AuthInfo{Token: "not-a-token-east-accepts"}
	cfg.Contexts["shoot"] = &clientcmdapi.Context{Cluster: "shoot", AuthInfo: "shoot"}
	cfg.CurrentContext = "shoot"
	return clientcmd.Write(*cfg)
}

// seedScenario: a control plane that exists before the provider starts and one created once the
// first is engaged are engaged (Secret "gardener"), with ClusterEngaged Events, a flapping
// control plane's Warnings make a series, and nothing is refused.
func seedScenario(t *testing.T, cfg *rest.Config, user string) []string {
	project := fmt.Sprintf("rbacseed%d", rbacRuns.Add(1))
	add := func(name string) string {
		if err := writeSeedSecret(t.Context(), "shoot--"+project+"--"+name, memberToken(t, "west", project+"-"+name), nil); err != nil {
			t.Fatal(err)
		}
		cluster, err := seedCluster(t.Context(), project, embeddedShoot(project, name, nil))
		if err != nil {
			t.Fatal(err)
		}
		return cluster
	}
	before := add("before")
	flap := envtest.StartForwarderForTest(t, fleet.Member("east"))
	refused, err := refusedKubeconfig(flap.URL())
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSeedSecret(t.Context(), "shoot--"+project+"--flapping", refused, nil); err != nil {
		t.Fatal(err)
	}
	flapping, err := seedCluster(t.Context(), project, embeddedShoot(project, "flapping", nil))
	if err != nil {
		t.Fatal(err)
	}
	p, trial := startForRBAC(t, cfg, gardener.Options{Topology: gardener.TopologySeed, Namespaces: []string{"garden-" + project}})
	get := func(name string) error {
		_, err := p.Get(t.Context(), gardener.SeedClusterName(name))
		return err
	}
	names := []func() string{func() string { return before }, func() string { return add("after") }}
	return memberSteps(trial, "Cluster", "", get, names, flap, flapping, user)
}
