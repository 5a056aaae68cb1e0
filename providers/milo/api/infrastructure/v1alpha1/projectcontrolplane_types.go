// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProjectControlPlaneReady is the condition type Milo sets on a ProjectControlPlane once the
// project's control plane serves requests (Milo's constant of the same name).
const ProjectControlPlaneReady = "ControlPlaneReady"

// Reasons of the ControlPlaneReady condition.
const (
	// ReasonReady: the control plane is ready.
	ReasonReady = "Ready"
	// ReasonCreating: the control plane is being created (the CRD's default).
	ReasonCreating = "Creating"
)

// Labels and annotations Milo puts on ProjectControlPlanes.
const (
	ProjectNameLabel    = "resourcemanager.miloapis.com/project-name"
	ProjectUIDLabel     = "resourcemanager.miloapis.com/project-uid"
	OwnerNameAnnotation = "resourcemanager.miloapis.com/owner-name"
)

// ProjectControlPlane is the control plane Milo runs for the Project of the same name. It is
// cluster-scoped and has an empty spec.
type ProjectControlPlane struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProjectControlPlaneSpec   `json:"spec,omitempty"`
	Status ProjectControlPlaneStatus `json:"status,omitempty"`
}

// ProjectControlPlaneSpec is empty: Milo derives everything from the Project.
type ProjectControlPlaneSpec struct{}

// ProjectControlPlaneStatus is the observed state of a ProjectControlPlane.
type ProjectControlPlaneStatus struct {
	// Conditions include ProjectControlPlaneReady.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ProjectControlPlaneList is a list of ProjectControlPlanes.
type ProjectControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ProjectControlPlane `json:"items"`
}
