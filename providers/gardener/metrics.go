// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"mcr.dev/core/providers/kit"
)

// Errors counts failed attempts to engage a usable Shoot (or seed Cluster object), by reason:
// the Warning Event reasons (ClusterSetupFailed included), with InvalidKubeconfig refined into kubeconfig.Reason values
// (ExecPlugin, AuthProviderPlugin, LocalFileReference, InsecureTLS, InvalidKubeconfig) and
// MissingKubeconfigData. An object that stays broken counts again each time it is synced.
//
// BrokenClusters is the number of selected, usable shoots that cannot be engaged at the
// moment (or whose new credentials cannot be used), summed over the Gardener providers of
// the process. Alert on it staying above zero.
var Errors, BrokenClusters = kit.RegisterMetrics(providerName, "clusters") //nolint:revive // one call creates and registers both

var (
	// AdminKubeconfigRequests counts requests to the adminkubeconfig subresource of Shoots
	// (TopologyGarden), by result: "success" or "error".
	AdminKubeconfigRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcr_gardener_provider_adminkubeconfig_requests_total",
		Help: "Requests of the Gardener provider to the adminkubeconfig subresource of Shoots, by result.",
	}, []string{"result"})

	// CredentialRotations counts re-engagements of an engaged shoot with new credentials:
	// renewed admin credentials (garden) or a renewed token in the "gardener" Secret (seed).
	CredentialRotations = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "mcr_gardener_provider_credential_rotations_total",
		Help: "Re-engagements of engaged shoots with new credentials.",
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(AdminKubeconfigRequests, CredentialRotations)
}
