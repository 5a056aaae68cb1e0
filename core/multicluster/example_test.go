// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package multicluster_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
)

// staticProvider serves clusters handed to it by code. It shows the rules of the contract that
// Get and IndexField follow; a real provider is built on mcr.dev/core/providers/kit, which also
// engages, retries and reports the fleet's status.
type staticProvider struct {
	mu       sync.Mutex
	clusters map[multicluster.ClusterName]cluster.Cluster
}

var _ multicluster.Provider = &staticProvider{}

// Get returns the engaged instance, or an error wrapping ErrClusterNotFound: never (nil, nil).
func (p *staticProvider) Get(_ context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cl, ok := p.clusters[name]; ok {
		return cl, nil
	}
	return nil, fmt.Errorf("cluster %q: %w", name, multicluster.ErrClusterNotFound)
}

// IndexField applies to every current cluster (and, in a real provider, every future one).
func (p *staticProvider) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, cl := range p.clusters {
		if err := cl.GetFieldIndexer().IndexField(ctx, obj, field, extract); err != nil {
			return err
		}
	}
	return nil
}

// Callers tell "not part of the fleet" from other failures with errors.Is, whatever the
// provider adds to the message.
func ExampleProvider() {
	var p multicluster.Provider = &staticProvider{}
	_, err := p.Get(context.Background(), "eu-west")
	fmt.Println(err)
	fmt.Println(errors.Is(err, multicluster.ErrClusterNotFound))
	// Output:
	// cluster "eu-west": cluster not found
	// true
}

// A provider built on the kit reports what it found and what fails; readiness checks and the
// fleet debug endpoint read it through StatusReporter.
func ExampleFleetStatus() {
	var reporter multicluster.StatusReporter = fixedStatus{
		Listed:  true,
		Failing: map[multicluster.ClusterName]string{"us-east": "Unauthorized: the member refused the credentials"},
	}
	status := reporter.FleetStatus()
	fmt.Println("listed:", status.Listed)
	for name, reason := range status.Failing {
		fmt.Printf("failing: %s (%s)\n", name, reason)
	}
	// Output:
	// listed: true
	// failing: us-east (Unauthorized: the member refused the credentials)
}

type fixedStatus multicluster.FleetStatus

func (s fixedStatus) FleetStatus() multicluster.FleetStatus { return multicluster.FleetStatus(s) }
