// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/gardener"
	"mcr.dev/providers/gardener/internal/frontproxy"
)

// rbacWindow bounds each step of the RBAC scenarios: long enough for the provider with every
// permission of the manifest (the "nothing removed" runs show it), short enough to keep the
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
		scenario func(t *testing.T, cfg *rest.Config, user string) error
	}{
		{"config/rbac-garden.yaml", func(t *testing.T, cfg *rest.Config, user string) error {
			return gardenScenario(t, proxy, flappingShoot, cfg, user)
		}},
		{"config/rbac-seed.yaml", seedScenario},
	} {
		rules := providertest.MustManifestRules(t, tc.manifest, "ClusterRole")
		run := func(t *testing.T, rules []rbacv1.PolicyRule) error {
			name := fmt.Sprintf("rbac-%d", rbacRuns.Add(1))
			data, err := fleet.Member("host").ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{
				Name: name, ClusterRules: rules,
			})
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
			if err != nil {
				t.Fatal(err)
			}
			return tc.scenario(t, cfg, "system:serviceaccount:mcr-system:"+name)
		}
		t.Run(tc.manifest, func(t *testing.T) {
			t.Parallel()
			t.Run("nothing removed", func(t *testing.T) {
				t.Parallel()
				if err := run(t, rules); err != nil {
					t.Fatalf("with every permission of the manifest: %v", err)
				}
			})
			for _, r := range providertest.EachPermissionRemoved(rules) {
				t.Run("without "+r.Removed, func(t *testing.T) {
					t.Parallel()
					err := run(t, r.Rules)
					if err == nil {
						t.Fatalf("the provider did everything without %s: the permission is not needed, remove it from %s", r.Removed, tc.manifest)
					}
					t.Logf("without %s: %v", r.Removed, err)
				})
			}
		})
	}
}

// startForRBAC starts a provider that may fail to start (its cache cannot sync without the
// permission taken away) and returns a channel closed when Start returned, and its error.
func startForRBAC(t *testing.T, cfg *rest.Config, opts gardener.Options) (*gardener.Provider, <-chan struct{}, *error) {
	t.Helper()
	opts.Logger = (&logBuffer{}).Logger()
	opts.CacheSyncTimeout = 10 * time.Second
	opts.RetryMinDelay, opts.RetryMaxDelay = 100*time.Millisecond, time.Second
	p, err := gardener.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Start fails when the host cache cannot sync: within reports that, so the run keeps it.
	var startErr error
	run := providertest.RunInBackground(t, "the provider", waitTimeout, func(ctx context.Context) error {
		startErr = p.Start(ctx, providertest.NewRecorder())
		return nil
	})
	return p, run.Done(), &startErr
}

// within polls check for rbacWindow, and gives up early when the provider stopped.
func within(what string, stopped <-chan struct{}, startErr *error, check func() error) error {
	deadline := time.Now().Add(rbacWindow)
	for {
		err := check()
		if err == nil {
			return nil
		}
		select {
		case <-stopped:
			return fmt.Errorf("%s: the provider stopped: %w", what, *startErr)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %s: %w", what, rbacWindow, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// noneRefused returns an error if, within a few seconds, a log line says the host refused a
// request of user.
func noneRefused(user string) error {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range providertest.ProcessLogs.Lines() {
			if strings.Contains(line, user) && strings.Contains(strings.ToLower(line), "forbidden") {
				return fmt.Errorf("a request was refused: %s", line)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return nil
}

// gardenScenario: a Shoot that exists before the provider starts and one created once the first
// is engaged are engaged (adminkubeconfig), with ClusterEngaged Events, and nothing is refused.
func gardenScenario(t *testing.T, proxy *frontproxy.Server, flappingShoot func(ns, server string), cfg *rest.Config, user string) error {
	ns := newNamespace(t, "garden-rbac")
	usableShoot(t, ns, "before", "east")
	flap := envtest.StartForwarderForTest(t, fleet.Member("east"))
	flappingShoot(ns, flap.URL())
	usableShoot(t, ns, "flapping", "east")
	p, stopped, startErr := startForRBAC(t, proxy.ConfigFor(cfg), gardener.Options{Topology: gardener.TopologyGarden, Namespaces: []string{ns}})
	for _, name := range []string{"before", "after"} {
		if name == "after" {
			usableShoot(t, ns, name, "west")
		}
		if err := within("Shoot "+name+" engaged", stopped, startErr, func() error {
			_, err := p.Get(t.Context(), gardener.ShootClusterName(ns, name))
			return err
		}); err != nil {
			return err
		}
		if err := within("Event ClusterEngaged on Shoot "+name, stopped, startErr, func() error {
			return hasEvent(t.Context(), "Shoot", ns, name, kit.ReasonClusterEngaged)
		}); err != nil {
			return err
		}
	}
	if err := flapScenario(t.Context(), flap, "Shoot", ns, "flapping", stopped, startErr); err != nil {
		return err
	}
	return noneRefused(user)
}

// flapScenario shows that the same Warning recorded again for unchanged objects is counted in
// its Event's series (a patch): Unauthorized, ClusterUnreachable while flap is down,
// Unauthorized again once it is up.
func flapScenario(ctx context.Context, flap *envtest.Forwarder, kind, namespace, name string, stopped <-chan struct{}, startErr *error) error {
	if err := within("Event Unauthorized on "+name, stopped, startErr, func() error {
		return hasEvent(ctx, kind, namespace, name, kit.ReasonUnauthorized)
	}); err != nil {
		return err
	}
	flap.Down()
	if err := within("Event ClusterUnreachable on "+name, stopped, startErr, func() error {
		return hasEvent(ctx, kind, namespace, name, kit.ReasonClusterUnreachable)
	}); err != nil {
		return err
	}
	if err := flap.Up(); err != nil {
		return err
	}
	return within("the second Unauthorized Event of "+name+" counted in a series", stopped, startErr, func() error {
		evNS := namespace
		if evNS == "" {
			evNS = metav1.NamespaceDefault
		}
		var list eventsv1.EventList
		if err := host.List(ctx, &list, client.InNamespace(evNS)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Regarding.Kind == kind && e.Regarding.Name == name && e.Reason == kit.ReasonUnauthorized && e.Series != nil && e.Series.Count >= 2 {
				return nil
			}
		}
		return errors.New("no Unauthorized Event with a series")
	})
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
// first is engaged are engaged (Secret "gardener"), with ClusterEngaged Events, and nothing is
// refused.
func seedScenario(t *testing.T, cfg *rest.Config, user string) error {
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
	p, stopped, startErr := startForRBAC(t, cfg, gardener.Options{Topology: gardener.TopologySeed, Namespaces: []string{"garden-" + project}})
	for _, name := range []string{before, ""} {
		if name == "" {
			name = add("after")
		}
		if err := within("control plane "+name+" engaged", stopped, startErr, func() error {
			_, err := p.Get(t.Context(), gardener.SeedClusterName(name))
			return err
		}); err != nil {
			return err
		}
		if err := within("Event ClusterEngaged on Cluster "+name, stopped, startErr, func() error {
			return hasEvent(t.Context(), "Cluster", "", name, kit.ReasonClusterEngaged)
		}); err != nil {
			return err
		}
	}
	if err := flapScenario(t.Context(), flap, "Cluster", "", flapping, stopped, startErr); err != nil {
		return err
	}
	return noneRefused(user)
}

// hasEvent returns nil once the object has an Event of reason.
func hasEvent(ctx context.Context, kind, namespace, name, reason string) error {
	notes, err := eventNotes(ctx, kind, namespace, name, reason)
	if err != nil {
		return err
	}
	if len(notes) == 0 {
		return errors.New("no such Event")
	}
	return nil
}
