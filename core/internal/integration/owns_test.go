package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "mcr.dev/core/builder"
	"mcr.dev/core/clusters"
	mchandler "mcr.dev/core/handler"
	mcreconcile "mcr.dev/core/reconcile"
)

// Owns enqueues the owner in the cluster the owned object lives in, resolving the owner with
// that cluster's scheme and RESTMapper; OnlyMetadata watches work per cluster too.
func TestOwnsAndMetadataWatches(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "b")
	p := newTestProvider(clusters.Options[cluster.Cluster]{})
	mgr := startManager(t, p)
	s := newSeen()
	err := mcbuilder.ControllerManagedBy(mgr).Named("owns-"+ns).
		For(&corev1.ConfigMap{}, mcbuilder.WithPredicates()).
		Owns(&corev1.Secret{}).
		Watches(&corev1.ServiceAccount{}, mchandler.EnqueueRequestForObject, mcbuilder.OnlyMetadata).
		Complete(mcreconcile.Func(func(_ context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			if req.Namespace == ns {
				s.add(req)
			}
			return reconcile.Result{}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	p.mustAdd(t, "b", fleet.Member("b").Config())

	c := memberClient(t, "b")
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}}
	if err := c.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the owner to be reconciled", func() bool { return s.has("b", ns, "owner") })
	controller := true
	owned := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owned", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: &controller,
	}}}}
	// Remove the owner's own record so only the Secret's event can bring it back.
	s.mu.Lock()
	delete(s.reqs, mcreconcile.Request{ClusterName: "b", Request: reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "owner"}}})
	s.mu.Unlock()
	if err := c.Create(ctx, owned); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the owned Secret to enqueue its owner", func() bool { return s.has("b", ns, "owner") })
	if s.has("b", ns, "owned") {
		t.Fatal("Owns enqueued the owned object instead of its owner")
	}

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "robot"}}
	if err := c.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the metadata-only watch to deliver", func() bool { return s.has("b", ns, "robot") })
}
