// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
)

// fleet is shared by the tests of this package: starting apiservers is the slow part.
var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	envtest.Main(m, envtest.Options{Members: []string{"a", "b"}}, func(f *envtest.Fleet) error {
		fleet = f
		return nil
	})
}

// newCluster builds an unstarted controller-runtime cluster for cfg.
func newCluster(t testing.TB, cfg *rest.Config) cluster.Cluster {
	t.Helper()
	cl, err := cluster.New(cfg)
	if err != nil {
		t.Fatalf("cluster.New: %v", err)
	}
	return cl
}

// memberCluster builds an unstarted cluster for a fleet member.
func memberCluster(t testing.TB, member string) cluster.Cluster {
	t.Helper()
	return newCluster(t, fleet.Member(member).Config())
}

// eventLog is an Aware that records engagements and their ends, in order.
type eventLog struct {
	mu     sync.Mutex
	events []string
	fail   error
	// ids names cluster instances in events, so replacements can be told apart.
	ids map[cluster.Cluster]string
}

func (l *eventLog) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return l.fail
	}
	id := l.idLocked(name, cl)
	l.events = append(l.events, "engage "+id)
	context.AfterFunc(ctx, func() { l.add("disengage " + id) })
	return nil
}

func (l *eventLog) idLocked(name multicluster.ClusterName, cl cluster.Cluster) string {
	if l.ids == nil {
		l.ids = map[cluster.Cluster]string{}
	}
	if id, ok := l.ids[cl]; ok {
		return id
	}
	n := 1
	for _, id := range l.ids {
		if strings.HasPrefix(id, string(name)+"#") {
			n++
		}
	}
	id := fmt.Sprintf("%s#%d", name, n)
	l.ids[cl] = id
	return id
}

func (l *eventLog) add(event string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, event)
}

func (l *eventLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

// indexCounter wraps a cluster and counts IndexField calls per object type and field.
type indexCounter struct {
	cluster.Cluster
	mu     sync.Mutex
	counts map[string]int
}

func countIndexes(cl cluster.Cluster) *indexCounter {
	return &indexCounter{Cluster: cl, counts: map[string]int{}}
}

func (c *indexCounter) GetFieldIndexer() client.FieldIndexer { return c }

func (c *indexCounter) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	c.mu.Lock()
	c.counts[fmt.Sprintf("%T/%s", obj, field)]++
	c.mu.Unlock()
	return c.Cluster.GetFieldIndexer().IndexField(ctx, obj, field, extract)
}

func (c *indexCounter) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[key]
}

// startTracker wraps a cluster and reports when its Start has returned.
type startTracker struct {
	cluster.Cluster
	returned chan struct{}
	// failNow, when closed, makes Start stop the cluster and return an error on its own.
	failNow chan struct{}
}

func trackStart(cl cluster.Cluster) *startTracker {
	return &startTracker{Cluster: cl, returned: make(chan struct{}), failNow: make(chan struct{})}
}

func (s *startTracker) Start(ctx context.Context) error {
	defer close(s.returned)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 1)
	go func() { errs <- s.Cluster.Start(ctx) }()
	select {
	case err := <-errs:
		return err
	case <-s.failNow:
		cancel()
		if err := <-errs; err != nil {
			return fmt.Errorf("injected failure (Start also returned: %w)", err)
		}
		return fmt.Errorf("injected failure")
	}
}

func (s *startTracker) hasReturned() bool {
	select {
	case <-s.returned:
		return true
	default:
		return false
	}
}
