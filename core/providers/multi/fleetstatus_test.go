// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package multi_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/multi"
	"mcr.dev/core/providers/namespace"
	"mcr.dev/core/providers/nop"
	"mcr.dev/core/providers/providertest"
)

// reporting is a member provider with a fleet status of its own.
type reporting struct {
	nop.Provider
	status multicluster.FleetStatus
}

func (r *reporting) FleetStatus() multicluster.FleetStatus { return r.status }

// multi's status is its members': listed once every member that reports a status is, failing
// members under their prefixed names; members without a status count as listed.
func TestFleetStatusMergesTheMembers(t *testing.T) {
	p := multi.New(multi.Options{})
	var reporter multicluster.StatusReporter = p
	east := &reporting{status: multicluster.FleetStatus{Listed: true, Failing: map[multicluster.ClusterName]string{"c1": "unreachable"}}}
	west := &reporting{status: multicluster.FleetStatus{Listed: true}}
	for prefix, member := range map[string]multicluster.Provider{
		"east":  east,
		"west":  multi.AsRunnable(west, nil), // the status of a provider run through AsRunnable is its own
		"plain": nop.New(),
	} {
		if err := p.AddProvider(prefix, member); err != nil {
			t.Fatal(err)
		}
	}
	want := map[multicluster.ClusterName]string{"east#c1": "unreachable"}
	if st := reporter.FleetStatus(); !st.Listed || !maps.Equal(st.Failing, want) {
		t.Fatalf("FleetStatus = %+v, want listed and failing %v", st, want)
	}

	west.status = multicluster.FleetStatus{Failing: map[multicluster.ClusterName]string{"c2": "refused"}}
	want["west#c2"] = "refused"
	if st := reporter.FleetStatus(); st.Listed || !maps.Equal(st.Failing, want) {
		t.Fatalf("FleetStatus with west unlisted = %+v, want unlisted and failing %v", st, want)
	}

	p.RemoveProvider("west")
	p.RemoveProvider("east")
	if st := reporter.FleetStatus(); !st.Listed || len(st.Failing) != 0 {
		t.Fatalf("FleetStatus without the reporting members = %+v, want listed and nothing failing", st)
	}
}

// A kit provider under multi: the member it cannot engage shows in multi's status, under its
// prefixed name, until it is engaged.
func TestFleetStatusOfAKitMember(t *testing.T) {
	host := newCluster(t, "a")
	hostCtx, stopHost := context.WithCancel(context.Background())
	hostDone := make(chan struct{})
	go func() { defer close(hostDone); _ = host.Start(hostCtx) }()
	t.Cleanup(func() { stopHost(); <-hostDone })

	const refused = "tenants#multi-status-"
	aware := providertest.NewRecorder()
	var refuse atomic.Bool
	refuse.Store(true)
	aware.FailEngage(func(n multicluster.ClusterName) error {
		if strings.HasPrefix(string(n), refused) && refuse.Load() {
			return errors.New("controllers cannot start here")
		}
		return nil
	})
	p := multi.New(multi.Options{})
	if err := p.AddProvider("tenants", namespace.New(host, namespace.Options{})); err != nil {
		t.Fatal(err)
	}
	stop := start(t, p, aware)
	defer stop()

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: strings.TrimPrefix(refused, "tenants#")}}
	if err := host.GetClient().Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.GetClient().Delete(context.Background(), ns) })
	name := multicluster.ClusterName("tenants#" + ns.Name)
	testcheck.WaitFor(t, "multi's status to report "+string(name)+" failing", func() bool {
		st := p.FleetStatus()
		return st.Listed && strings.Contains(st.Failing[name], "controllers cannot start here")
	})

	refuse.Store(false)
	aware.WaitEngaged(t, p, name, 30*time.Second)
	testcheck.WaitFor(t, string(name)+" to leave the failing members", func() bool {
		_, failing := p.FleetStatus().Failing[name]
		return !failing
	})
}
