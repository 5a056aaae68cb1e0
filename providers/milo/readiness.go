// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"

	"sigs.k8s.io/controller-runtime/pkg/client"

	infrastructurev1alpha1 "mcr.dev/providers/milo/api/infrastructure/v1alpha1"
	resourcemanagerv1alpha1 "mcr.dev/providers/milo/api/resourcemanager/v1alpha1"
)

// Mode selects what the provider watches and how it reaches a project's control plane.
type Mode string

const (
	// ModeProject watches resourcemanager.miloapis.com/v1alpha1 Projects on the Milo apiserver,
	// engages the ones whose Ready condition is True, and reaches each project's control plane
	// through the Milo apiserver at
	// <base>/apis/resourcemanager.miloapis.com/v1alpha1/projects/<project>/control-plane. For
	// operators outside the infrastructure cluster. It is the default.
	ModeProject Mode = "Project"

	// ModeProjectControlPlane watches infrastructure.miloapis.com/v1alpha1 ProjectControlPlanes
	// on the infrastructure cluster, engages the ones whose ControlPlaneReady condition is True,
	// and reaches each project's control plane at its in-cluster Service,
	// https://milo-apiserver.project-<project>.svc.cluster.local:6443. For operators inside the
	// infrastructure cluster, with its service networking.
	ModeProjectControlPlane Mode = "ProjectControlPlane"
)

func (m Mode) validate() error {
	switch m {
	case ModeProject, ModeProjectControlPlane:
		return nil
	}
	return fmt.Errorf("unknown Mode %q (want %q or %q)", m, ModeProject, ModeProjectControlPlane)
}

// newObject returns an empty object of the type the mode watches.
func (m Mode) newObject() client.Object {
	if m == ModeProjectControlPlane {
		return &infrastructurev1alpha1.ProjectControlPlane{}
	}
	return &resourcemanagerv1alpha1.Project{}
}

// kind names the watched type in messages.
func (m Mode) kind() string {
	if m == ModeProjectControlPlane {
		return "ProjectControlPlane"
	}
	return "Project"
}

func (m Mode) defaultIsReady() func(context.Context, client.Object) bool {
	if m == ModeProjectControlPlane {
		return ControlPlaneReady
	}
	return ProjectReady
}

// ProjectReady reports whether obj is a Project whose Ready condition is True: Milo has
// provisioned its control plane. It is the default of Options.IsReady in ModeProject.
func ProjectReady(_ context.Context, obj client.Object) bool {
	p, ok := obj.(*resourcemanagerv1alpha1.Project)
	return ok && meta.IsStatusConditionTrue(p.Status.Conditions, resourcemanagerv1alpha1.ProjectReady)
}

// ControlPlaneReady reports whether obj is a ProjectControlPlane whose ControlPlaneReady
// condition is True. It is the default of Options.IsReady in ModeProjectControlPlane.
func ControlPlaneReady(_ context.Context, obj client.Object) bool {
	pcp, ok := obj.(*infrastructurev1alpha1.ProjectControlPlane)
	return ok && meta.IsStatusConditionTrue(pcp.Status.Conditions, infrastructurev1alpha1.ProjectControlPlaneReady)
}

// selects reports whether Options.Selector selects obj.
func (p *Provider) selects(obj client.Object) bool {
	return p.opts.Selector == nil || p.opts.Selector.Matches(labels.Set(obj.GetLabels()))
}
