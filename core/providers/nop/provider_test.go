// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package nop_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/nop"
)

type failOnEngage struct{ t *testing.T }

func (a failOnEngage) Engage(_ context.Context, name multicluster.ClusterName, _ cluster.Cluster) error {
	a.t.Errorf("nop provider engaged %q", name)
	return nil
}

func TestProvider(t *testing.T) {
	p := nop.New()

	for _, name := range []multicluster.ClusterName{"", "a"} {
		cl, err := p.Get(t.Context(), name)
		if cl != nil || !errors.Is(err, multicluster.ErrClusterNotFound) {
			t.Fatalf("Get(%q) = %v, %v; want nil and ErrClusterNotFound", name, cl, err)
		}
	}
	if err := p.IndexField(t.Context(), &corev1.Pod{}, "spec.nodeName", func(client.Object) []string { return nil }); err != nil {
		t.Fatalf("IndexField: %v", err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	returned := make(chan error, 1)
	go func() { returned <- p.Start(ctx, failOnEngage{t}) }()
	select {
	case err := <-returned:
		t.Fatalf("Start returned before its context ended: %v", err)
	default:
	}
	cancel()
	if err := <-returned; err != nil {
		t.Fatalf("Start: %v", err)
	}
}
