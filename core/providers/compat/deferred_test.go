// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package compat_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/compat"
)

// recordingProvider records what Deferred passes on to it.
type recordingProvider struct {
	mu      sync.Mutex
	fields  []string
	started chan struct{}
}

func (p *recordingProvider) Start(ctx context.Context, _ multicluster.Aware) error {
	close(p.started)
	<-ctx.Done()
	return nil
}

func (p *recordingProvider) Get(_ context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	return nil, errors.New("asked for " + string(name))
}

func (p *recordingProvider) IndexField(_ context.Context, _ client.Object, field string, _ client.IndexerFunc) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fields = append(p.fields, field)
	return nil
}

func TestDeferredWaitsForItsProvider(t *testing.T) {
	var d compat.Deferred[*recordingProvider]
	if _, err := d.Get(t.Context(), "east"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Errorf("Get before Set = %v, want ErrClusterNotFound", err)
	}
	if err := d.IndexField(t.Context(), &corev1.ConfigMap{}, "before", nil); err != nil {
		t.Fatal(err)
	}
	// Start before Set ends with its context.
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := d.Start(ctx, nil); err != nil {
		t.Errorf("Start ended by its context: %v", err)
	}

	done := make(chan error, 1)
	runCtx, stop := context.WithCancel(t.Context())
	go func() { done <- d.Start(runCtx, nil) }()
	p := &recordingProvider{started: make(chan struct{})}
	if err := d.Set(p); err != nil {
		t.Fatal(err)
	}
	if err := d.Set(p); err == nil {
		t.Error("a second Set succeeded")
	}
	select {
	case <-p.started:
	case <-time.After(time.Minute):
		t.Fatal("Start did not run the provider after Set")
	}
	if err := d.IndexField(t.Context(), &corev1.ConfigMap{}, "after", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(t.Context(), "east"); err == nil || err.Error() != "asked for east" {
		t.Errorf("Get after Set = %v, want the provider's answer", err)
	}
	if got, ok := d.Provider(); !ok || got != p {
		t.Error("Provider does not return the provider set")
	}
	p.mu.Lock()
	fields := p.fields
	p.mu.Unlock()
	if len(fields) != 2 || fields[0] != "before" || fields[1] != "after" {
		t.Errorf("indexes passed on: %v", fields)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("Start: %v", err)
	}
}

func (p *recordingProvider) ListClusters() []multicluster.ClusterName {
	return []multicluster.ClusterName{"east"}
}

func TestDeferredSetUpRefusesNoManager(t *testing.T) {
	var d compat.Deferred[*recordingProvider]
	built := false
	err := d.SetUp("test provider", nil, func(*rest.Config) (*recordingProvider, error) {
		built = true
		return &recordingProvider{}, nil
	})
	if err == nil || err.Error() != "test provider: manager is nil" || built {
		t.Errorf("SetUp without a manager = %v (built: %v), want the error and no provider built", err, built)
	}
	if names := d.ListClusters(); names != nil {
		t.Errorf("ListClusters before Set = %v, want none", names)
	}
	if err := d.Set(&recordingProvider{}); err != nil {
		t.Fatal(err)
	}
	if names := d.ListClusters(); len(names) != 1 || names[0] != "east" {
		t.Errorf("ListClusters after Set = %v, want the provider's", names)
	}
}
