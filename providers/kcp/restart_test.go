// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp_test

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kcp"
	"mcr.dev/providers/kcp/internal/frontproxy"
)

// TestHostRestart stops, on a fleet of its own, every apiserver the provider depends on: the
// one that holds the APIExportEndpointSlice (the APIExport's workspace) and the one behind the
// shard that holds the logical clusters' APIBindings (the workspaces), keeps them down for
// longer than Options.CacheSyncTimeout and starts them again with their data and addresses. The
// engaged logical clusters must stay engaged through the outage, and afterwards the provider
// must engage a logical cluster that appears and disengage one whose binding goes.
func TestHostRestart(t *testing.T) {
	const (
		cacheSyncTimeout = 5 * time.Second
		outage           = 3 * cacheSyncTimeout
	)
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
	const backend = "restart-shard"
	if backends[backend], err = client.New(f.Member("shard").Config(), client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { delete(backends, backend) })
	shard, err := frontproxy.Start(frontproxy.Options{
		Token:    token,
		Backends: []frontproxy.Backend{{Name: backend, Config: f.Member("shard").Config()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(shard.Close)
	newCluster := func(hint string) binding {
		name := logicalcluster.Name(uniqueName(t, hint))
		if err := shard.AddCluster(name, backend); err != nil {
			t.Fatal(err)
		}
		return newBinding(t, backend, name, name.String()+"-binding", "", true)
	}

	slice := &apisv1alpha1.APIExportEndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: exportName},
		Spec:       apisv1alpha1.APIExportEndpointSliceSpec{APIExport: apisv1alpha1.ExportBindingReference{Name: exportName}},
	}
	if err := kcpClient.Create(ctx, slice); err != nil {
		t.Fatal(err)
	}
	slice.Status.APIExportEndpoints = []apisv1alpha1.APIExportEndpoint{{URL: shard.URL()}}
	if err := kcpClient.Status().Update(ctx, slice); err != nil {
		t.Fatal(err)
	}

	stays, goes := newCluster("stays"), newCluster("goes")
	cfg := f.Member("kcp").Config()
	cfg.BearerToken = token
	cfg.CAData = append(cfg.CAData, shard.CAData()...)
	s := startWithConfig(t, cfg, exportName, kcp.Options{Options: kit.Options{
		CacheSyncTimeout: cacheSyncTimeout,
		RetryMinDelay:    100 * time.Millisecond,
		RetryMaxDelay:    2 * time.Second,
	}}, providertest.NewRecorder())
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
	// Removed once the endpoint's watch is back. A binding deleted while the watch reconnects
	// is found gone by the relist, and the informer of kcp-dev/apimachinery v2.32.0 drops such
	// deletes: its store's key function refuses the DeletedFinalStateUnknown tombstone (fixed
	// upstream by kcp-dev/kcp#4364), so the logical cluster would stay engaged.
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
