// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // v1beta1 is supported on purpose (Options.APIVersion).
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// APIVersion selects the version of the Cluster API Cluster type the provider reads.
type APIVersion string

const (
	// V1Beta2 reads cluster.x-k8s.io/v1beta2 Clusters (*v1beta2.Cluster), the storage version
	// since Cluster API v1.11. It is the default.
	V1Beta2 APIVersion = "v1beta2"

	// V1Beta1 reads cluster.x-k8s.io/v1beta1 Clusters (*v1beta1.Cluster). Cluster API v1.14
	// still serves v1beta1, deprecated, through its conversion webhook; use it for management
	// clusters that run an older Cluster API.
	V1Beta1 APIVersion = "v1beta1"
)

// newObject returns an empty Cluster of version v.
func (v APIVersion) newObject() client.Object {
	if v == V1Beta1 {
		return &clusterv1beta1.Cluster{}
	}
	return &clusterv1.Cluster{}
}

// hostTypes are the API types of the host cluster New builds besides client-go's: the Cluster
// API types of both versions, as the provider reads one of them and records Events on it.
var hostTypes = runtime.NewSchemeBuilder(clusterv1.AddToScheme, clusterv1beta1.AddToScheme)

func (v APIVersion) validate() error {
	switch v {
	case V1Beta2, V1Beta1:
		return nil
	}
	return fmt.Errorf("unknown APIVersion %q (want %q or %q)", v, V1Beta2, V1Beta1)
}

// ControlPlaneInitialized reports whether a Cluster's control plane accepts requests, the point
// from which Cluster API itself starts talking to the workload cluster. It is the default of
// Options.IsReady.
//
// For a v1beta2 Cluster it reads status.initialization.controlPlaneInitialized. For a v1beta1
// Cluster it reads status.controlPlaneReady or, when that is false, the ControlPlaneInitialized
// condition. Any other object is not ready.
//
// Cluster API sets both fields once and never clears them, so with this readiness a Cluster
// stops being ready only when someone edits its status; use ControlPlaneAvailable, or an IsReady
// of your own, to disengage clusters whose control plane goes away.
func ControlPlaneInitialized(_ context.Context, obj client.Object) bool {
	switch c := obj.(type) {
	case *clusterv1.Cluster:
		return ptr.Deref(c.Status.Initialization.ControlPlaneInitialized, false)
	case *clusterv1beta1.Cluster:
		if c.Status.ControlPlaneReady {
			return true
		}
		return v1beta1ConditionTrue(c.Status.Conditions, clusterv1beta1.ControlPlaneInitializedCondition)
	}
	return false
}

// ControlPlaneAvailable reports whether a Cluster's control plane is initialized and Cluster
// API currently reports it available: the ControlPlaneAvailable condition of a v1beta2 Cluster
// (status.v1beta2.conditions of a v1beta1 Cluster, or its ControlPlaneReady condition when
// those are absent). Use it as Options.IsReady to disengage clusters whose control plane Cluster
// API sees as unavailable, for example during a failed upgrade, and engage them again when it
// recovers.
func ControlPlaneAvailable(ctx context.Context, obj client.Object) bool {
	if !ControlPlaneInitialized(ctx, obj) {
		return false
	}
	switch c := obj.(type) {
	case *clusterv1.Cluster:
		return meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1.ClusterControlPlaneAvailableCondition)
	case *clusterv1beta1.Cluster:
		if c.Status.V1Beta2 != nil && meta.FindStatusCondition(c.Status.V1Beta2.Conditions, clusterv1.ClusterControlPlaneAvailableCondition) != nil {
			return meta.IsStatusConditionTrue(c.Status.V1Beta2.Conditions, clusterv1.ClusterControlPlaneAvailableCondition)
		}
		return v1beta1ConditionTrue(c.Status.Conditions, clusterv1beta1.ControlPlaneReadyCondition)
	}
	return false
}

func v1beta1ConditionTrue(conds clusterv1beta1.Conditions, t clusterv1beta1.ConditionType) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// InfrastructureKind returns the kind of a Cluster's spec.infrastructureRef ("" when unset or
// for objects that are not Clusters). Options.InfrastructureKinds filters on it.
func InfrastructureKind(obj client.Object) string {
	switch c := obj.(type) {
	case *clusterv1.Cluster:
		return c.Spec.InfrastructureRef.Kind
	case *clusterv1beta1.Cluster:
		if c.Spec.InfrastructureRef != nil {
			return c.Spec.InfrastructureRef.Kind
		}
	}
	return ""
}

// selects reports whether the options select a Cluster: its namespace, labels, infrastructure
// kind and Options.Filter. The provider's own host cache already holds only the selected
// namespaces, but a shared host cache (NewForHost) may hold more.
func (p *Provider) selects(ctx context.Context, obj client.Object) bool {
	o := p.opts
	if len(o.Namespaces) > 0 && !slices.Contains(o.Namespaces, obj.GetNamespace()) {
		return false
	}
	if o.Selector != nil && !o.Selector.Matches(labels.Set(obj.GetLabels())) {
		return false
	}
	if len(o.InfrastructureKinds) > 0 && !slices.Contains(o.InfrastructureKinds, InfrastructureKind(obj)) {
		return false
	}
	return o.Filter == nil || o.Filter(ctx, obj)
}
