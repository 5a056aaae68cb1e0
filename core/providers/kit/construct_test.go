// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
)

// What a provider's constructor leaves to the kit: the metrics registered under its name, the
// running of a host NewHost built, and the check that NewForHost was given a host.

func noSync(context.Context, string) kit.Result { return kit.Result{} }

func TestEngineReportsToTheMetricsRegisteredUnderItsName(t *testing.T) {
	const name = "registered-metrics-test-provider"
	errs, broken := kit.RegisterMetrics(name, "clusters")
	var set clusters.Clusters[cluster.Cluster]
	e, err := kit.NewEngine(kit.EngineOptions[string]{Name: name, Clusters: &set, Sync: noSync})
	if err != nil {
		t.Fatal(err)
	}
	e.Fail("east", kit.Member{Name: multicluster.ClusterName("east")}, kit.Permanent(kit.ReasonClusterSetupFailed, errors.New("refused")))
	if n := testutil.ToFloat64(errs.WithLabelValues(kit.ReasonClusterSetupFailed)); n != 1 {
		t.Errorf("errors counted %v, want 1", n)
	}
	if n := testutil.ToFloat64(broken); n != 1 {
		t.Errorf("broken members %v, want 1", n)
	}
}

func TestEngineRunsTheHostNewHostBuilt(t *testing.T) {
	own, err := kit.NewHost("test-provider", &rest.Config{Host: "https://127.0.0.1:1"}, logr.Discard(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	shared, err := cluster.New(&rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		host cluster.Cluster
		want bool
	}{{"built by NewHost", own, true}, {"the caller's", shared, false}} {
		var set clusters.Clusters[cluster.Cluster]
		e, err := kit.NewEngine(kit.EngineOptions[string]{Name: "test-provider", Clusters: &set, Sync: noSync, Host: tc.host})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.RunsHost(); got != tc.want {
			t.Errorf("host %s: run by the Engine = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestEngineWithoutHostForItsHostObjectsFails(t *testing.T) {
	var set clusters.Clusters[cluster.Cluster]
	_, err := kit.NewEngine(kit.EngineOptions[string]{
		Name: "test-provider", Clusters: &set, Sync: noSync,
		Sources: []kit.Source[string]{kit.HostObjects[string]{}},
	})
	if err == nil || !strings.Contains(err.Error(), "test provider: host cluster is nil") {
		t.Errorf("NewEngine without a host for HostObjects = %v, want an error saying the host cluster is nil", err)
	}
}

func TestNewHostSchemeHoldsClientGoAndTheProvidersTypes(t *testing.T) {
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	addWidget := func(s *runtime.Scheme) error {
		s.AddKnownTypeWithName(widget, &metav1.PartialObjectMetadata{})
		return nil
	}
	host, err := kit.NewHost("test-provider", &rest.Config{Host: "https://127.0.0.1:1"}, logr.Discard(), runtime.NewSchemeBuilder(addWidget), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, gvk := range []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("Secret"), widget} {
		if !host.GetScheme().Recognizes(gvk) {
			t.Errorf("the host's scheme does not hold %s", gvk)
		}
	}

	_, err = kit.NewHost("test-provider", &rest.Config{Host: "https://127.0.0.1:1"}, logr.Discard(),
		runtime.NewSchemeBuilder(func(*runtime.Scheme) error { return errors.New("conflicting types") }), nil)
	if err == nil || !strings.Contains(err.Error(), "test provider: conflicting types") {
		t.Errorf("NewHost with types that cannot be added = %v, want the provider named and the error", err)
	}
}
