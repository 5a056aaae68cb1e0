// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProjectReady is the condition type Milo sets on a Project once its control plane serves
// requests. Its reasons include ReasonReady, ReasonProvisioning and ReasonProjectNameConflict,
// plus reasons of the resource cleanup that runs while a Project is deleted.
const ProjectReady = "Ready"

// ProjectResourceCleanup is the condition type that reports the cleanup of a deleted Project's
// resources.
const ProjectResourceCleanup = "ResourceCleanup"

// Reasons of the Ready condition.
const (
	// ReasonReady: the project's control plane is ready.
	ReasonReady = "Ready"
	// ReasonProvisioning: the project's control plane is being created.
	ReasonProvisioning = "Provisioning"
	// ReasonProjectNameConflict: another project already uses the name.
	ReasonProjectNameConflict = "ProjectNameConflict"
)

// Labels Milo puts on Projects and on the objects it creates for them.
const (
	OrganizationNameLabel = "resourcemanager.miloapis.com/organization-name"
	ProjectNameLabel      = "resourcemanager.miloapis.com/project-name"
	ProjectUIDLabel       = "resourcemanager.miloapis.com/project-uid"
	OwnerNameLabel        = "resourcemanager.miloapis.com/owner-name"
)

// Project is a Milo project: a tenant with a control plane of its own. It is cluster-scoped.
type Project struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProjectSpec   `json:"spec,omitempty"`
	Status ProjectStatus `json:"status,omitempty"`
}

// ProjectSpec is the desired state of a Project.
type ProjectSpec struct {
	// OwnerRef names the owner of the project; Milo accepts kind Organization only.
	OwnerRef OwnerReference `json:"ownerRef"`
}

// OwnerReference names the owner of a Project.
type OwnerReference struct {
	// Kind of the owner: "Organization".
	Kind string `json:"kind"`
	// Name of the owner.
	Name string `json:"name"`
}

// ProjectStatus is the observed state of a Project.
type ProjectStatus struct {
	// Conditions include ProjectReady and ProjectResourceCleanup.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ProjectList is a list of Projects.
type ProjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Project `json:"items"`
}
