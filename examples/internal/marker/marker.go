// Package marker is the uniform controller the provider examples run: in every cluster of the
// fleet it marks the ConfigMaps labeled Label=true with the name of the cluster it found them
// in (annotation Annotation) and, when it runs as one of several replicas sharing the fleet,
// with the replica that did it (annotation ReplicaAnnotation). The point of those examples is the provider wiring; a controller
// whose effect is visible in every member shows that the wiring works.
package marker

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	mcr "mcr.dev/core"
	"mcr.dev/core/builder"
	"mcr.dev/core/controller"
	"mcr.dev/core/workqueue"
)

const (
	// Label selects the ConfigMaps to mark: only those with the value "true".
	Label = "mcr.dev/example"
	// Annotation is set to the name of the cluster the ConfigMap was reconciled in.
	Annotation = "mcr.dev/reconciled-in"
	// ReplicaAnnotation is set to the replica that reconciled the ConfigMap, by the controller
	// SetupReplica adds.
	ReplicaAnnotation = "mcr.dev/marked-by"
)

// Setup adds the controller to mgr.
func Setup(mgr mcr.Manager) error { return SetupReplica(mgr, "") }

// SetupReplica adds the controller to mgr, recording replica in ReplicaAnnotation of every
// ConfigMap it marks; an empty replica records nothing, as Setup.
func SetupReplica(mgr mcr.Manager, replica string) error {
	labeled := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[Label] == "true" })
	err := mcr.NewControllerManagedBy(mgr).
		Named("configmap-marker").
		For(&corev1.ConfigMap{}, builder.WithPredicates(labeled)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: 4,
			// With -leader-elect, a standby replica engages and syncs every member before it
			// leads, so a failover costs only the Lease (docs/benchmarks.md, "Failover with a
			// warm standby").
			EnableWarmup: ptr.To(true),
			// One queue, fair across clusters; a member whose API server answers slowly holds
			// at most 2 of the 4 workers, and one whose reconciles keep failing is parked by
			// its circuit breaker (docs/patterns.md, "Caps and circuit breaker per cluster";
			// its state is on the fleet debug page).
			NewQueue: workqueue.ClusterFairQueue[mcr.Request](workqueue.Options{
				MaxInFlightPerCluster: 2,
				Breaker:               &workqueue.BreakerOptions{},
			}),
		}).
		Complete(&Reconciler{Manager: mgr, Replica: replica})
	if err != nil {
		return fmt.Errorf("setting up the configmap-marker controller: %w", err)
	}
	return nil
}

// Reconciler marks one ConfigMap.
type Reconciler struct {
	Manager mcr.Manager
	// Replica, when not empty, is recorded in ReplicaAnnotation.
	Replica string
}

// Reconcile annotates the ConfigMap with the name of its cluster.
func (r *Reconciler) Reconcile(ctx context.Context, req mcr.Request) (mcr.Result, error) {
	cl, err := r.Manager.GetCluster(ctx, req.ClusterName)
	if err != nil {
		return mcr.Result{}, err
	}
	cm := &corev1.ConfigMap{}
	if err := cl.GetClient().Get(ctx, req.NamespacedName, cm); err != nil {
		return mcr.Result{}, client.IgnoreNotFound(err)
	}
	if cm.Annotations[Annotation] == string(req.ClusterName) && (r.Replica == "" || cm.Annotations[ReplicaAnnotation] == r.Replica) {
		return mcr.Result{}, nil
	}
	patch := client.MergeFrom(cm.DeepCopy())
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[Annotation] = string(req.ClusterName)
	if r.Replica != "" {
		cm.Annotations[ReplicaAnnotation] = r.Replica
	}
	if err := cl.GetClient().Patch(ctx, cm, patch); err != nil {
		return mcr.Result{}, fmt.Errorf("annotating ConfigMap %s: %w", req.NamespacedName, err)
	}
	// The logger of a reconcile already carries the cluster, namespace and name.
	mcr.LoggerFrom(ctx).Info("Marked ConfigMap with its cluster")
	return mcr.Result{}, nil
}
