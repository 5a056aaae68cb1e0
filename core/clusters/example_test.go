// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters_test

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/multicluster"
)

// StaticProvider is a minimal provider: it embeds Clusters, which supplies Get and IndexField,
// and engages a fixed set of kubeconfigs when the manager starts it.
type StaticProvider struct {
	clusters.Clusters[cluster.Cluster]
	Configs map[multicluster.ClusterName]*rest.Config
}

// Start engages every configured cluster and disengages them when ctx ends. The clusters'
// lifetime derives from ctx, the provider's own long-lived context.
func (p *StaticProvider) Start(ctx context.Context, aware multicluster.Aware) error {
	for name, cfg := range p.Configs {
		cl, err := cluster.New(cfg)
		if err != nil {
			return fmt.Errorf("cluster %q: %w", name, err)
		}
		if err := p.Add(ctx, name, cl, aware); err != nil {
			return err
		}
	}
	<-ctx.Done()
	for _, name := range p.ClusterNames() {
		p.Remove(name)
	}
	return nil
}

var (
	_ multicluster.Provider         = &StaticProvider{}
	_ multicluster.ProviderRunnable = &StaticProvider{}
)

// A provider embeds Clusters and only writes discovery.
func Example_provider() {
	p := &StaticProvider{}
	_, err := p.Get(context.Background(), "east")
	fmt.Println(err)
	// Output: cluster "east": cluster not found
}

// EqualConfigs tells a credential rotation from a repeated announcement.
func ExampleEqualConfigs() {
	before := &rest.Config{Host: "https://east.example:6443", BearerToken: "t1"}
	sameAgain := &rest.Config{Host: "https://east.example:6443", BearerToken: "t1", QPS: 50}
	rotated := &rest.Config{Host: "https://east.example:6443", BearerToken: "t2"}
	fmt.Println(clusters.EqualConfigs(before, sameAgain), clusters.EqualConfigs(before, rotated))
	// Output: true false
}
