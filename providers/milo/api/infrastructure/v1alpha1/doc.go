// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package v1alpha1 holds the part of Milo's infrastructure.miloapis.com/v1alpha1 API that the
// Milo provider (mcr.dev/providers/milo) reads: the cluster-scoped ProjectControlPlane and its
// status conditions.
//
// Milo creates one ProjectControlPlane per Project, with the Project's name, on the
// infrastructure cluster that runs the projects' control planes. Milo publishes no Go module, so
// the type is defined here with Milo's JSON names and only the fields the provider needs. The
// CRD the tests install is config/crd/infrastructure.miloapis.com_projectcontrolplanes.yaml of
// the provider module.
package v1alpha1
