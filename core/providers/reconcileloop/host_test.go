package reconcileloop_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/core/providers/reconcileloop"
)

// failingHost is a host cluster whose Start fails at once.
type failingHost struct {
	cluster.Cluster
	err error
}

func (h failingHost) Start(context.Context) error { return h.err }

func TestRunHostEndsWithTheHostsError(t *testing.T) {
	errBoom := errors.New("boom")
	h := reconcileloop.RunHost(context.Background(), "test provider", failingHost{err: errBoom})
	defer h.Stop()
	select {
	case <-h.Context().Done():
	case <-time.After(30 * time.Second):
		t.Fatal("Context did not end when the host stopped")
	}
	err := h.Err()
	if !errors.Is(err, context.Cause(h.Context())) || !strings.Contains(err.Error(), "test provider: the host cluster stopped: boom") {
		t.Errorf("Err() = %v, want the provider named and the host's error", err)
	}
}

func TestRunHostWithoutHostEndsWithoutError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := reconcileloop.RunHost(ctx, "test provider", nil)
	cancel()
	<-h.Context().Done()
	h.Stop()
	if err := h.Err(); err != nil {
		t.Errorf("Err() = %v after the parent context ended, want nil", err)
	}
}

// names collects enqueued object names.
type names struct {
	mu  sync.Mutex
	set map[string]int
}

func (n *names) add(o client.Object) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.set[o.GetName()]++
}

func (n *names) count(name string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.set[name]
}

func TestWatchHostAgainstAPIServer(t *testing.T) {
	fleet := envtest.StartForTest(t, "host")
	cfg := fleet.Member("host").Config()
	host, err := cluster.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	existing := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "existing"}}
	if err := c.Create(ctx, existing); err != nil {
		t.Fatal(err)
	}

	run := reconcileloop.RunHost(ctx, "test provider", host)
	defer run.Stop()
	seen := &names{set: map[string]int{}}
	stop, err := reconcileloop.WatchHost(run.Context(), host.GetCache(), "test provider", time.Minute, reconcileloop.Watch{
		Object:  &corev1.ConfigMap{},
		Enqueue: seen.add,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	// WatchHost returns once the handler has seen what exists.
	if seen.count("existing") == 0 {
		t.Error("the existing ConfigMap was not enqueued by the time WatchHost returned")
	}
	created := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "created"}}
	if err := c.Create(ctx, created); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, created); err != nil {
		t.Fatal(err)
	}
	providertest.Eventually(t, time.Minute, "created and deleted ConfigMap enqueued twice", func() error {
		if n := seen.count("created"); n < 2 {
			return errors.New("not yet")
		}
		return nil
	})
}

func TestWatchHostNamesWhatIsMissing(t *testing.T) {
	fleet := envtest.StartForTest(t, "host")
	// A scheme without the watched type: the informer cannot be made.
	host, err := cluster.New(fleet.Member("host").Config(), func(o *cluster.Options) { o.Scheme = runtime.NewScheme() })
	if err != nil {
		t.Fatal(err)
	}
	run := reconcileloop.RunHost(t.Context(), "test provider", host)
	defer run.Stop()
	_, err = reconcileloop.WatchHost(run.Context(), host.GetCache(), "test provider", time.Minute, reconcileloop.Watch{
		Object:       &corev1.ConfigMap{},
		Kind:         "ConfigMap",
		Enqueue:      func(client.Object) {},
		InformerHint: "is the type in the host's scheme?",
	})
	if err == nil || !strings.Contains(err.Error(), "test provider: getting the host's informer for ConfigMap (is the type in the host's scheme?)") {
		t.Errorf("WatchHost error = %v, want the provider, kind and hint named", err)
	}
}

func TestObjectOfUnwrapsTombstones(t *testing.T) {
	cm := testObject()
	for _, in := range []any{cm, toolscacheTombstone(cm)} {
		if o, ok := reconcileloop.ObjectOf(in); !ok || o.GetName() != "a" {
			t.Errorf("ObjectOf(%T) = %v, %v", in, o, ok)
		}
	}
	if _, ok := reconcileloop.ObjectOf("not an object"); ok {
		t.Error("ObjectOf accepted a string")
	}
}

func toolscacheTombstone(obj client.Object) any {
	return toolscache.DeletedFinalStateUnknown{Key: "ns/a", Obj: obj}
}
