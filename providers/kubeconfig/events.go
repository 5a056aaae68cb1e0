// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig

// EventSource is the reporting controller of the Events the provider records on Secrets.
const EventSource = "mcr.dev/" + providerName

// Reasons of the Events the provider records on Secrets and of the
// mcr_kubeconfig_provider_errors_total metric. Warnings are recorded when a problem appears or
// changes, not again while it stays the same; each attempt still counts in the metric.
// Kubeconfigs refused by the Policy or undecodable get the Event reason kit.ReasonInvalidKubeconfig;
// their metric reason is finer, one of the kubeconfig.Reason* values (ExecPlugin,
// AuthProviderPlugin, LocalFileReference, InsecureTLS, InvalidKubeconfig).
// The reasons every provider shares (InvalidKubeconfig, ClusterSetupFailed, Unauthorized,
// ClusterUnreachable, EngageFailed, ClusterEngaged, CredentialsRotated, ClusterDisengaged) are the
// provider kit's: kit.Reason* in mcr.dev/core/providers/kit.
const (
	// ReasonMissingKubeconfig (metric only; Event reason InvalidKubeconfig): the data key is
	// missing or empty.
	ReasonMissingKubeconfig = "MissingKubeconfig"

	// ReasonClusterNameConflict (Warning): another Secret owns the cluster name. Retried when
	// that Secret goes away or maps to another name.
	ReasonClusterNameConflict = "ClusterNameConflict"
)
