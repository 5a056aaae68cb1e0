// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mccontroller "mcr.dev/core/controller"
	"mcr.dev/core/internal/testcheck"
	mcmanager "mcr.dev/core/manager"
	mcreconcile "mcr.dev/core/reconcile"
)

// TestFleetReadyCheckFollowsControllerSync runs a controller over a member that answers and one
// whose apiserver is down: the fleet is not ready while the down member's watch has not synced,
// and the check names it; it becomes ready once the member is back and the watch synced.
func TestFleetReadyCheckFollowsControllerSync(t *testing.T) {
	flaky := fleet.Member("flaky")
	stopMember(t, flaky)
	mgr := newManager(t, nil)
	c, err := mccontroller.New("readiness", mgr, mccontroller.Options{
		Reconciler: mcreconcile.Func(func(context.Context, mcreconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil }),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MultiClusterWatch(configMaps()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	check := mcmanager.FleetReadyCheck(mgr, mcmanager.ReadyCheckOptions{})

	if err := mgr.Engage(ctx, "a", startedCluster(t, fleet.Member("a").Config())); err != nil {
		t.Fatal(err)
	}
	if err := mgr.Engage(ctx, "flaky", startedCluster(t, flaky.Config())); err != nil {
		t.Fatal(err)
	}
	// The manager engages its local cluster too; only flaky may be missing.
	testcheck.WaitFor(t, "the fleet reported unready because of flaky only", func() bool {
		err := check(nil)
		return err != nil && strings.HasPrefix(err.Error(), "1 of ") && strings.HasSuffix(err.Error(), "engaged clusters are not synced yet: flaky")
	})
	if err := flaky.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := check(nil)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(fmt.Errorf("still not ready after flaky came back: %w", err))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
