// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kind_test

import (
	"errors"
	"fmt"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"mcr.dev/core/envtest"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kind"
	"mcr.dev/providers/kind/internal/standin"
)

// TestNeverReportsCredentials plants a marker secret in every credential field of the
// admin.conf of stand-in kind clusters (which the kind library reads through `docker exec`), and
// in an admin.conf the kind library cannot parse, and drives the clusters through failure,
// rotation of a working cluster and removal, under the default policy and under one that lets
// exec and auth-provider plugins and proxies run (so that their errors are reported too). The
// working tokens of the rotation must not leak either. Every log line of both providers and of
// controller-runtime and client-go, every error the providers returned and the metrics are
// scanned. The provider records no Events.
func TestNeverReportsCredentials(t *testing.T) {
	kc := useStandIn(t)
	admin := fleet.Member("east").Config()
	check := providertest.NewLeakCheck()

	type provider struct {
		name string
		s    *started
		logs *logBuffer
	}
	var providers []provider
	for _, policy := range []struct {
		name   string
		policy kubeconfig.Policy
	}{
		{"default", kubeconfig.Policy{}},
		{"plugins allowed", providertest.PermissivePolicy},
	} {
		logs := &logBuffer{}
		s := start(t, kind.Options{Options: kit.Options{Policy: policy.policy, Logger: logs.Logger()}})
		providers = append(providers, provider{name: policy.name, s: s, logs: logs})
	}
	defer func() {
		var report providertest.LeakReport
		for _, p := range providers {
			report.Logs = append(report.Logs, p.logs)
		}
		check.Report(t, report)
	}()
	// reported waits until every provider has reported a problem of cluster, and checks that
	// none engaged it.
	reported := func(cluster, what string) {
		t.Helper()
		eventually(t, fmt.Sprintf("problem of %s (%s) reported", cluster, what), func() error {
			for _, p := range providers {
				if len(p.logs.All(`"cluster"="`+cluster+`"`, "cannot be engaged")) == 0 {
					return fmt.Errorf("not reported by the provider with the %s policy", p.name)
				}
			}
			return nil
		})
		for _, p := range providers {
			if n := p.s.rec.Count(multicluster.ClusterName(cluster)); n != 0 {
				t.Errorf("%s (%s) was engaged by the provider with the %s policy", cluster, what, p.name)
			}
			_, err := p.s.provider.Get(t.Context(), multicluster.ClusterName(cluster))
			if !errors.Is(err, multicluster.ErrClusterNotFound) {
				t.Errorf("Get(%s) = %v, want ErrClusterNotFound", cluster, err)
			}
			check.ScanError("Get error", err)
		}
	}

	// A working cluster, recreated with another token.
	var tokens [][]byte
	for _, name := range []string{"kind-leak-first", "kind-leak-second"} {
		data, err := fleet.Member("west").ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, data)
		check.Add(tokenOf(t, data))
	}
	if err := kc.Create("rotating", tokens[0]); err != nil {
		t.Fatal(err)
	}
	working := map[string]*engagement{}
	for _, p := range providers {
		p.s.waitEngaged(t, "rotating")
		working[p.name] = p.s.current(t, "rotating")
	}
	if err := kc.Create("rotating", tokens[1]); err != nil {
		t.Fatal(err)
	}
	for _, p := range providers {
		first := working[p.name]
		eventually(t, "rotation engaged the new token", func() error {
			if e, _ := p.s.rec.Latest("rotating"); e == first || !e.Alive() || first.Alive() {
				return errors.New("the old instance is still engaged")
			}
			return nil
		})
		working[p.name] = p.s.current(t, "rotating")
	}

	rotate := func(what string, change func() error) {
		t.Helper()
		// Counted per provider: one provider may log a problem twice (its reason changes
		// between retries) while the other has not seen the change yet.
		problems, resolved := map[string]int{}, map[string]int{}
		for _, p := range providers {
			problems[p.name] = len(p.logs.All(`"cluster"="rotating"`, "cannot be engaged"))
			resolved[p.name] = len(p.logs.All(`"cluster"="rotating"`, "problem resolved"))
		}
		if err := change(); err != nil {
			t.Fatal(err)
		}
		eventually(t, fmt.Sprintf("rotation to %s reported by both providers", what), func() error {
			for _, p := range providers {
				if len(p.logs.All(`"cluster"="rotating"`, "cannot be engaged")) <= problems[p.name] {
					return fmt.Errorf("not reported by the provider with the %s policy", p.name)
				}
			}
			return nil
		})
		if err := kc.Create("rotating", tokens[1]); err != nil {
			t.Fatal(err)
		}
		eventually(t, fmt.Sprintf("rotation back from %s resolved by both providers", what), func() error {
			for _, p := range providers {
				if len(p.logs.All(`"cluster"="rotating"`, "problem resolved")) <= resolved[p.name] {
					return fmt.Errorf("not resolved by the provider with the %s policy", p.name)
				}
			}
			return nil
		})
		for _, p := range providers {
			p.s.RequireUntouched(t, "rotating", working[p.name])
		}
	}

	for i, v := range check.AllMarkedKubeconfigs(t, admin) {
		name := fmt.Sprintf("marked-%d", i)
		if err := kc.Create(name, v.Kubeconfig); err != nil {
			t.Fatal(err)
		}
		reported(name, "a marked "+v.Field)
		rotate("a marked "+v.Field, func() error { return kc.Create("rotating", v.Kubeconfig) })
	}

	// An admin.conf the kind library cannot parse, with the secret where YAML errors quote it.
	broken := providertest.Marker("unparseable admin.conf")
	check.Add(broken)
	unparseable := func(name string) func(*standin.Cluster) {
		return func(c *standin.Cluster) {
			for i := range c.Nodes {
				if c.Nodes[i].Files != nil {
					c.Nodes[i].Files[standin.AdminConfPath] = "apiVersion: v1\nkind: Config\nusers:\n- name: kubernetes-admin\n  user: " + broken + "\n" +
						"current-context: kubernetes-admin@" + name + "\n"
				}
			}
		}
	}
	if err := kc.Create("unparseable", tokens[0]); err != nil {
		t.Fatal(err)
	}
	if err := kc.Update("unparseable", unparseable("unparseable")); err != nil {
		t.Fatal(err)
	}
	// It may be engaged before the update; what matters is that the failure is reported.
	eventually(t, "unparseable admin.conf reported", func() error {
		for _, p := range providers {
			if len(p.logs.All(`"cluster"="unparseable"`, "cannot be engaged")) == 0 {
				return fmt.Errorf("not reported by the provider with the %s policy", p.name)
			}
		}
		return nil
	})
	rotate("an unparseable admin.conf", func() error { return kc.Update("rotating", unparseable("rotating")) })

	// Every cluster goes.
	clusters, err := kc.State.Clusters()
	if err != nil {
		t.Fatal(err)
	}
	for name := range clusters {
		if err := kc.Delete(name); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range providers {
		p.s.waitEngaged(t)
		_, err := p.s.provider.Get(t.Context(), "rotating")
		check.ScanError("Get error", err)
	}
}

// tokenOf returns the bearer token of a kubeconfig's current context.
func tokenOf(t *testing.T, data []byte) string {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil || cfg.BearerToken == "" {
		t.Fatalf("kubeconfig without a token: %v", err)
	}
	return cfg.BearerToken
}
