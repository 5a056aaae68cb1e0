// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
)

// listedProvider is a provider whose source of truth is a fixed list of members, which its
// source queues when it starts, as a host informer's first list does.
type listedProvider struct {
	kit.Members[string]
	engine  *kit.Engine[string]
	members map[string]*rest.Config
}

// listSource queues the members of the list.
type listSource struct{ p *listedProvider }

func (s listSource) Start(_ context.Context, e *kit.Engine[string]) (func(), error) {
	for name := range s.p.members {
		e.Add(name)
	}
	return func() {}, nil
}

func (p *listedProvider) sync(ctx context.Context, name string) kit.Result {
	return p.engine.Engage(ctx, name, kit.Member{Name: multicluster.ClusterName(name), Config: p.members[name], From: "the test"})
}

// TestEngineReportsFleetStatus checks the provider's FleetStatus: not listed until every member
// of the first list has been tried once, then the members it cannot engage with their problem.
func TestEngineReportsFleetStatus(t *testing.T) {
	fleet := envtest.StartForTest(t, "up", "down")
	down := fleet.Member("down")
	downConfig := down.Config()
	if err := down.Stop(); err != nil {
		t.Fatal(err)
	}
	p := &listedProvider{members: map[string]*rest.Config{"up": fleet.Member("up").Config(), "down": downConfig}}
	var err error
	p.engine, err = p.Init(kit.EngineOptions[string]{
		Name:    "listed-provider",
		Options: kit.Options{CacheSyncTimeout: 3 * time.Second, RetryMinDelay: 50 * time.Millisecond, RetryMaxDelay: 500 * time.Millisecond},
		Sync:    p.sync,
		Sources: []kit.Source[string]{listSource{p}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var _ multicluster.StatusReporter = p
	if st := p.FleetStatus(); st.Listed {
		t.Fatal("the provider reports its first list synced before it started")
	}
	run := providertest.Start(t, p, time.Minute)
	var st multicluster.FleetStatus
	providertest.Eventually(t, time.Minute, "the first list synced", func() error {
		if st = p.FleetStatus(); !st.Listed {
			return fmt.Errorf("not listed")
		}
		return nil
	})
	// Listed only once "down" was tried: its failure is known the moment the list is.
	if why := st.Failing["down"]; why == "" {
		t.Errorf("listed before the unreachable member was tried: failing = %v", st.Failing)
	}
	if _, failing := st.Failing["up"]; failing {
		t.Errorf("the reachable member is reported failing: %v", st.Failing)
	}
	run.Recorder.WaitEngaged(t, p, "up", time.Minute)

	if err := down.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	run.Recorder.WaitEngaged(t, p, "down", time.Minute)
	providertest.Eventually(t, time.Minute, "no member failing", func() error {
		if st := p.FleetStatus(); len(st.Failing) > 0 {
			return fmt.Errorf("failing: %v", st.Failing)
		}
		return nil
	})
}
