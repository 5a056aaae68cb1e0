// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package kind is a cluster provider that engages the clusters of the local kind installation
// (https://kind.sigs.k8s.io): every cluster `kind get clusters` lists, or those whose names
// start with Options.Prefix. It is meant for development and CI, where `kind create cluster` is
// how a fleet is made.
//
// Every Options.PollInterval it lists the kind clusters and reads each selected cluster's
// kubeconfig through the kind library (sigs.k8s.io/kind/pkg/cluster) and the container engine,
// each call bounded by Options.CommandTimeout; it needs no Kubernetes permissions anywhere. A
// listed cluster is engaged once it answers with its kubeconfig's credentials, engaged again
// when kind gave it new ones (deleted and created again under the same name), and disengaged
// when it is gone from the list.
//
// A cluster is named after its kind cluster, exactly: "fleet-a" for `kind create cluster --name
// fleet-a` (not its kubeconfig context, "kind-fleet-a"); Options.Prefix stays part of the name.
//
// Create the provider with New and hand it to the manager, which starts it; no SetupWithManager
// is needed. Options embeds kit.Options (mcr.dev/core/providers/kit), the fields every provider
// shares; the provider runs on that kit's engine and engage step.
//
// docs/providers/kind.md in the mcr repository is the full reference: readiness, credentials,
// failures, metrics and troubleshooting, options.
package kind
