// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	mccontext "mcr.dev/core/context"
	"mcr.dev/core/multicluster"
)

// Validator validates objects of type T written to one cluster of the fleet: controller-runtime's
// admission.Validator with the cluster the request came from, by name and as its cluster
// object, to read related objects in that same cluster. An error denies the request; an
// apierrors status error keeps its code and reason.
type Validator[T runtime.Object] interface {
	// ValidateCreate validates obj, to be created in cluster name.
	ValidateCreate(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster, obj T) (admission.Warnings, error)
	// ValidateUpdate validates the update of oldObj to newObj in cluster name.
	ValidateUpdate(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster, oldObj, newObj T) (admission.Warnings, error)
	// ValidateDelete validates the deletion of obj from cluster name.
	ValidateDelete(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster, obj T) (admission.Warnings, error)
}

// Defaulter sets defaults on objects of type T written to one cluster of the fleet:
// controller-runtime's admission.Defaulter with the cluster the request came from. An error
// denies the request.
type Defaulter[T runtime.Object] interface {
	// Default sets the defaults of obj, to be written to cluster name.
	Default(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster, obj T) error
}

// ValidatorHandler returns the admission handler that decodes objects of type T with scheme
// and validates them with v, for New. The handler takes the cluster from the context a Webhook
// gives it.
func ValidatorHandler[T runtime.Object](scheme *runtime.Scheme, v Validator[T]) admission.Handler {
	// controller-runtime decodes the request and encodes the answer; the adapter adds the cluster.
	return admission.WithValidator[T](scheme, validatorInCluster[T]{v: v}).Handler
}

// DefaulterHandler returns the admission handler that decodes objects of type T with scheme,
// defaults them with d and answers with the patch, for New. The handler takes the cluster from
// the context a Webhook gives it.
func DefaulterHandler[T runtime.Object](scheme *runtime.Scheme, d Defaulter[T], opts ...admission.DefaulterOption) admission.Handler {
	return admission.WithDefaulter[T](scheme, defaulterInCluster[T]{d: d}, opts...).Handler
}

// validatorInCluster is an admission.Validator that calls a Validator with the cluster of the
// context.
type validatorInCluster[T runtime.Object] struct{ v Validator[T] }

func (a validatorInCluster[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	name, cl, err := clusterFrom(ctx)
	if err != nil {
		return nil, err
	}
	return a.v.ValidateCreate(ctx, name, cl, obj)
}

func (a validatorInCluster[T]) ValidateUpdate(ctx context.Context, oldObj, newObj T) (admission.Warnings, error) {
	name, cl, err := clusterFrom(ctx)
	if err != nil {
		return nil, err
	}
	return a.v.ValidateUpdate(ctx, name, cl, oldObj, newObj)
}

func (a validatorInCluster[T]) ValidateDelete(ctx context.Context, obj T) (admission.Warnings, error) {
	name, cl, err := clusterFrom(ctx)
	if err != nil {
		return nil, err
	}
	return a.v.ValidateDelete(ctx, name, cl, obj)
}

// defaulterInCluster is an admission.Defaulter that calls a Defaulter with the cluster of the
// context.
type defaulterInCluster[T runtime.Object] struct{ d Defaulter[T] }

func (a defaulterInCluster[T]) Default(ctx context.Context, obj T) error {
	name, cl, err := clusterFrom(ctx)
	if err != nil {
		return err
	}
	return a.d.Default(ctx, name, cl, obj)
}

// errNoCluster is the answer of a typed handler called outside a Webhook.
var errNoCluster = errors.New("webhook: no cluster in the context: serve typed handlers through a Webhook")

func clusterFrom(ctx context.Context) (multicluster.ClusterName, cluster.Cluster, error) {
	name, ok := mccontext.ClusterFrom(ctx)
	if !ok {
		return "", nil, errNoCluster
	}
	cl, ok := mccontext.ClusterObjectFrom(ctx)
	if !ok {
		return "", nil, errNoCluster
	}
	return name, cl, nil
}
