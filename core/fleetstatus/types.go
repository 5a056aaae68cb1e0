// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleetstatus

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Object is a hub object whose status an Aggregator maintains. The API type implements it on its
// pointer type, returning pointers into its status, so that the Aggregator reads and changes the
// fields in place:
//
//	func (w *Widget) FleetStatus() *fleetstatus.FleetStatus   { return &w.Status.FleetStatus }
//	func (w *Widget) StatusConditions() *[]metav1.Condition { return &w.Status.Conditions }
type Object interface {
	client.Object
	// FleetStatus returns the per-cluster part of the object's status.
	FleetStatus() *FleetStatus
	// StatusConditions returns the object's conditions. The Aggregator keeps its summary
	// condition among them and leaves the others as they are.
	StatusConditions() *[]metav1.Condition
}

// FleetStatus is the part of a hub object's status that says how each cluster is doing. Embed it
// in the status of the API type, inline, beside the object's conditions:
//
//	type WidgetStatus struct {
//		Conditions              []metav1.Condition `json:"conditions,omitempty"`
//		fleetstatus.FleetStatus `json:",inline"`
//	}
type FleetStatus struct {
	// Clusters has the conditions of every cluster of the fleet, sorted by cluster and type.
	// +optional
	// +listType=map
	// +listMapKey=cluster
	// +listMapKey=type
	Clusters []ClusterCondition `json:"clusters,omitempty"`
	// ReadyClusters is the number of clusters whose conditions are all True.
	// +optional
	ReadyClusters int32 `json:"readyClusters"`
	// TotalClusters is the number of clusters in Clusters.
	// +optional
	TotalClusters int32 `json:"totalClusters"`
}

// ClusterCondition is one condition of one cluster: metav1.Condition with the cluster's name.
type ClusterCondition struct {
	// Cluster is the name of the cluster, as the multi-cluster manager names it.
	// +required
	// +kubebuilder:validation:MinLength=1
	Cluster string `json:"cluster"`
	// Type of the condition, in CamelCase, such as Synced.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	Type string `json:"type"`
	// Status of the condition: True, False or Unknown.
	// +required
	// +kubebuilder:validation:Enum=True;False;Unknown
	Status metav1.ConditionStatus `json:"status"`
	// Reason is a CamelCase word for the status, such as Forbidden.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`
	// Message says in words why the condition has its status. It is redacted of credentials and
	// truncated.
	// +optional
	// +kubebuilder:validation:MaxLength=32768
	Message string `json:"message,omitempty"`
	// LastTransitionTime is when the status last changed.
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=date-time
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
	// ObservedGeneration is the generation of the hub object the condition was computed for.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// IsTrue reports whether the condition's status is True.
func (c ClusterCondition) IsTrue() bool { return c.Status == metav1.ConditionTrue }

// DeepCopyInto copies s into out; generated deep-copy functions of types that embed FleetStatus
// call it.
func (s *FleetStatus) DeepCopyInto(out *FleetStatus) {
	*out = *s
	if s.Clusters != nil {
		out.Clusters = make([]ClusterCondition, len(s.Clusters))
		for i := range s.Clusters {
			s.Clusters[i].DeepCopyInto(&out.Clusters[i])
		}
	}
}

// DeepCopy returns a deep copy of s.
func (s *FleetStatus) DeepCopy() *FleetStatus {
	if s == nil {
		return nil
	}
	out := new(FleetStatus)
	s.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies c into out.
func (c *ClusterCondition) DeepCopyInto(out *ClusterCondition) {
	*out = *c
	c.LastTransitionTime.DeepCopyInto(&out.LastTransitionTime)
}

// DeepCopy returns a deep copy of c.
func (c *ClusterCondition) DeepCopy() *ClusterCondition {
	if c == nil {
		return nil
	}
	out := new(ClusterCondition)
	c.DeepCopyInto(out)
	return out
}
