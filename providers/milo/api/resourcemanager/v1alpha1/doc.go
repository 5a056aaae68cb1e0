// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package v1alpha1 holds the part of Milo's resourcemanager.miloapis.com/v1alpha1 API that the
// Milo provider (mcr.dev/providers/milo) reads: the cluster-scoped Project, its owner reference
// and its status conditions.
//
// Milo publishes no Go module, so these types are defined here, field for field with Milo's own
// JSON names, but only with the fields the provider needs; unknown fields of real objects are
// dropped on decoding and never written back (the provider only reads Projects). The CRD the
// tests install is config/crd/resourcemanager.miloapis.com_projects.yaml of the provider module.
package v1alpha1
