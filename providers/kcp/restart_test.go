// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kcp"
	"mcr.dev/providers/kcp/internal/frontproxy"
)

// restartFixture is a fleet of its own for the outage tests: the apiserver "kcp" holds the
// APIExportEndpointSlice, and the apiserver "shard" the APIBindings of the logical clusters,
// served by a front-proxy shard the slice lists (through a forwarder when the test asks for one).
type restartFixture struct {
	fleet *envtest.Fleet
	shard *frontproxy.Server
	// link is before the shard, nil without one.
	link *envtest.Forwarder
	// cfg reaches the slice's workspace with the shard's token and CA.
	cfg *rest.Config
	// newCluster adds a logical cluster with a ready binding to the shard.
	newCluster func(hint string) binding
}

const restartBackend = "restart-shard"

// newRestartFixture starts the fleet, the shard and the slice; with forwarded set, the slice
// lists the shard through a forwarder the test can take down.
func newRestartFixture(t *testing.T, forwarded bool) *restartFixture {
	t.Helper()
	f := envtest.StartForTest(t, "kcp", "shard")
	ctx := t.Context()
	if err := errors.Join(
		frontproxy.InstallCRDs(ctx, f.Member("kcp").Config(), frontproxy.APIExportEndpointSlicesCRD),
		frontproxy.InstallCRDs(ctx, f.Member("shard").Config(), frontproxy.APIBindingsCRD),
	); err != nil {
		t.Fatal(err)
	}
	kcpClient, err := client.New(f.Member("kcp").Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	// The binding helpers find the shard's apiserver by name.
	if backends[restartBackend], err = client.New(f.Member("shard").Config(), client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { delete(backends, restartBackend) })
	shard, err := frontproxy.Start(frontproxy.Options{
		Token:    token,
		Backends: []frontproxy.Backend{{Name: restartBackend, Config: f.Member("shard").Config()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(shard.Close)
	r := &restartFixture{fleet: f, shard: shard}
	r.newCluster = func(hint string) binding {
		name := logicalcluster.Name(uniqueName(t, hint))
		if err := shard.AddCluster(name, restartBackend); err != nil {
			t.Fatal(err)
		}
		return newBinding(t, restartBackend, name, name.String()+"-binding", "", true)
	}

	url := shard.URL()
	if forwarded {
		r.link, url = forwardShard(t, shard)
	}
	slice := &apisv1alpha1.APIExportEndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: exportName},
		Spec:       apisv1alpha1.APIExportEndpointSliceSpec{APIExport: apisv1alpha1.ExportBindingReference{Name: exportName}},
	}
	if err := kcpClient.Create(ctx, slice); err != nil {
		t.Fatal(err)
	}
	slice.Status.APIExportEndpoints = []apisv1alpha1.APIExportEndpoint{{URL: url}}
	if err := kcpClient.Status().Update(ctx, slice); err != nil {
		t.Fatal(err)
	}
	r.cfg = f.Member("kcp").Config()
	r.cfg.BearerToken = token
	r.cfg.CAData = append(r.cfg.CAData, shard.CAData()...)
	return r
}

// TestHostRestart stops, on a fleet of its own, every apiserver the provider depends on: the
// one that holds the APIExportEndpointSlice (the APIExport's workspace) and the one behind the
// shard that holds the logical clusters' APIBindings (the workspaces), keeps them down for
// longer than Options.CacheSyncTimeout and starts them again with their data and addresses. The
// engaged logical clusters must stay engaged through the outage, and afterwards the provider
// must engage a logical cluster that appears and disengage one whose binding goes.
func TestHostRestart(t *testing.T) {
	const (
		cacheSyncTimeout = providertest.RestartCacheSyncTimeout
		outage           = 3 * cacheSyncTimeout
	)
	r := newRestartFixture(t, false)
	f, newCluster := r.fleet, r.newCluster
	ctx := t.Context()
	stays, goes := newCluster("stays"), newCluster("goes")
	s := startWithConfig(t, r.cfg, exportName, kcp.Options{Options: providertest.RestartKitOptions()}, providertest.NewRecorder())
	eStays, eGoes := s.waitEngaged(t, stays.cluster), s.waitEngaged(t, goes.cluster)

	for _, name := range []string{"kcp", "shard"} {
		if err := f.Member(name).Stop(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("apiservers stopped for %s (CacheSyncTimeout %s)", outage, cacheSyncTimeout)
	// The engagements must live through the whole outage, not only at its end.
	deadline := time.Now().Add(outage)
	for time.Now().Before(deadline) {
		for _, e := range []*providertest.Engagement{eStays, eGoes} {
			if !e.Alive() {
				t.Fatal("a logical cluster was disengaged while the apiservers were down")
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, name := range []string{"kcp", "shard"} {
		if err := f.Member(name).Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	restarted := time.Now()
	t.Log("apiservers started again")

	added := newCluster("added")
	s.waitEngaged(t, added.cluster)
	t.Logf("a logical cluster added after the restart was engaged %s after it", time.Since(restarted).Round(100*time.Millisecond))
	// Removed once the endpoint's watch is back (TestBindingDeletedDuringOutage deletes one
	// while the watch is down).
	if err := goes.delete(ctx); err != nil {
		t.Fatal(err)
	}
	s.waitDisengaged(t, goes.cluster, eGoes)
	t.Logf("a logical cluster removed after the restart was disengaged %s after it", time.Since(restarted).Round(100*time.Millisecond))
	if !eStays.Alive() {
		t.Error("the logical cluster that stayed was disengaged")
	}
	if _, err := s.provider.Get(ctx, multicluster.ClusterName(stays.cluster)); err != nil {
		t.Errorf("Get of the logical cluster that stayed: %v", err)
	}
	if n := s.rec.Count(multicluster.ClusterName(stays.cluster)); n != 1 {
		t.Errorf("the logical cluster that stayed was engaged %d times, want once", n)
	}
}

// TestBindingDeletedDuringOutage deletes the only binding of a logical cluster while the
// endpoint's watch is down (a forwarder before the shard refuses connections) and restarts the
// shard's apiserver meanwhile, so that the watch cannot resume where it stopped and the
// informer lists again. That list no longer has the binding, and the informer of
// kcp-dev/apimachinery v2.32.0 keeps it: its store refuses the relist's
// DeletedFinalStateUnknown tombstone. The provider's check against a live list after the
// reconnect must find it gone: the logical cluster is disengaged, Options.Handlers hear
// OnDelete, the miss is logged with the cluster and counted, and the other logical cluster
// stays engaged, once. ResyncPeriod is an hour, so only the reconnect can start the check.
func TestBindingDeletedDuringOutage(t *testing.T) {
	r := newRestartFixture(t, true)
	ctx := t.Context()
	stays, goes := r.newCluster("stays"), r.newCluster("goes")
	deletes := &deleteRecorder{}
	opts := kcp.Options{Options: providertest.RestartKitOptions(), Handlers: []kcp.Handler{deletes}}
	opts.ResyncPeriod = time.Hour
	s := startWithConfig(t, r.cfg, exportName, opts, providertest.NewRecorder())
	eStays, eGoes := s.waitEngaged(t, stays.cluster), s.waitEngaged(t, goes.cluster)
	missedBefore := testutil.ToFloat64(kcp.Errors.WithLabelValues("MissedDeletion"))

	r.link.Down()
	if err := goes.delete(ctx); err != nil {
		t.Fatal(err)
	}
	apiserver := r.fleet.Member("shard")
	if err := apiserver.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := apiserver.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !eGoes.Alive() {
		t.Fatal("the logical cluster was disengaged while the endpoint's watch was down: the test cannot show the relist")
	}
	if err := r.link.Up(); err != nil {
		t.Fatal(err)
	}
	reconnected := time.Now()

	// client-go's reflector retries a failed watch with a backoff of up to 30 s, jittered up to
	// twice that, so the relist may come a minute after the link is up; on a busy machine more.
	const reconnectTimeout = 3 * time.Minute
	s.rec.WaitDisengaged(t, s.provider, multicluster.ClusterName(goes.cluster), eGoes, reconnectTimeout)
	t.Logf("disengaged %s after the watch could reconnect", time.Since(reconnected).Round(100*time.Millisecond))
	s.waitLog(t, "missed a deletion", goes.cluster.String(), "APIBinding")
	eventually(t, "OnDelete of the deleted binding", func() error {
		if !deletes.saw(goes.cluster) {
			return errors.New("no OnDelete for the binding of " + goes.cluster.String())
		}
		return nil
	})
	if got := testutil.ToFloat64(kcp.Errors.WithLabelValues("MissedDeletion")) - missedBefore; got < 1 {
		t.Errorf("MissedDeletion counted %v times, want at least once", got)
	}
	if !eStays.Alive() {
		t.Error("the logical cluster that stayed was disengaged")
	}
	if n := s.rec.Count(multicluster.ClusterName(stays.cluster)); n != 1 {
		t.Errorf("the logical cluster that stayed was engaged %d times, want once", n)
	}
}

// deleteRecorder is a Handler that remembers the logical clusters of the objects deleted.
type deleteRecorder struct {
	mu      sync.Mutex
	deleted map[logicalcluster.Name]bool
}

func (d *deleteRecorder) OnAdd(client.Object)         {}
func (d *deleteRecorder) OnUpdate(_, _ client.Object) {}
func (d *deleteRecorder) OnDelete(obj client.Object) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.deleted == nil {
		d.deleted = map[logicalcluster.Name]bool{}
	}
	d.deleted[logicalcluster.From(obj)] = true
}

func (d *deleteRecorder) saw(name logicalcluster.Name) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.deleted[name]
}
