// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package namespace

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/envtest"
	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
)

// fleet is started by the first test that needs it and shared by all; benchmarks of the
// dispatcher run without it.
var (
	fleetOnce sync.Once
	fleet     *envtest.Fleet
	fleetErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fleet != nil {
		_ = fleet.Stop()
	}
	os.Exit(code)
}

// startHost starts a host cluster on the fleet's apiserver for the duration of the test.
func startHost(t *testing.T) cluster.Cluster {
	t.Helper()
	fleetOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		fleet, fleetErr = envtest.Start(ctx, envtest.Options{Members: []string{"host"}})
	})
	if fleetErr != nil {
		t.Fatal(fleetErr)
	}
	host, err := cluster.New(fleet.Member("host").Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := host.Start(ctx); err != nil {
			t.Errorf("host: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return host
}

// engaged returns the cluster engaged under name, nil when none is.
func engaged(aware *providertest.Recorder, name multicluster.ClusterName) cluster.Cluster {
	if e, _ := aware.Latest(name); e.Alive() {
		return e.Cluster
	}
	return nil
}

// startProvider runs a namespace provider on host for the duration of the test.
func startProvider(t *testing.T, host cluster.Cluster) (*Provider, *providertest.Recorder) {
	t.Helper()
	aware := providertest.NewRecorder()
	return startProviderWith(t, New(host, Options{}), aware), aware
}

// startProviderWith runs p with aware for the duration of the test.
func startProviderWith(t *testing.T, p *Provider, aware multicluster.Aware) *Provider {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx, aware) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	return p
}

// namespaces numbers the namespaces tests create, so that repeated runs (-count) against the
// shared apiserver never collide with the terminating leftovers of earlier ones.
var namespaces atomic.Int64

// uniqueName returns base with a suffix no other namespace of this process has.
func uniqueName(base string) string {
	return fmt.Sprintf("%s-%d", base, namespaces.Add(1))
}

// createNamespace creates a namespace named after base on the host and waits until the
// provider engaged it.
func createNamespace(t *testing.T, host cluster.Cluster, aware *providertest.Recorder, base string) *Cluster {
	t.Helper()
	name := uniqueName(base)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := host.GetClient().Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "namespace "+name+" to be engaged", func() bool { return engaged(aware, multicluster.ClusterName(name)) != nil })
	return engaged(aware, multicluster.ClusterName(name)).(*Cluster)
}

// removeNamespace deletes a namespace for good. A bare apiserver has no namespace controller, so
// the test empties the finalizers itself, as that controller would after cleaning up.
func removeNamespace(t *testing.T, name string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(fleet.Member("host").Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Spec.Finalizers = nil
	if _, err := cs.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
