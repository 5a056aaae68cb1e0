// Package clusterapi is a cluster provider that engages one cluster for every ready Cluster API
// Cluster (cluster.x-k8s.io) on a management cluster, using the kubeconfig Secret Cluster API
// keeps for it, and keeps the fleet in step while Clusters are provisioned, rotate their
// credentials and are deleted.
//
// # What it watches
//
// On the management (host) cluster: Cluster objects (v1beta2 by default, v1beta1 with
// Options.APIVersion) and the Secrets labeled cluster.x-k8s.io/cluster-name, through informers
// of its own that Start runs (New), or through a cache the caller runs (NewForHost). No
// SetupWithManager is needed: the manager runs the provider. Options.Namespaces,
// Options.Selector, Options.InfrastructureKinds and Options.Filter narrow the Clusters it
// serves.
//
// # Cluster names
//
// A Cluster is engaged as
//
//	<namespace>/<name>
//
// of its Cluster object (ClusterName), as in multicluster-runtime's Cluster API provider.
// Names are stable across restarts and unique, because Cluster objects are namespaced.
//
// # Readiness
//
// A selected Cluster is engaged once Options.IsReady says it is ready: by default
// ControlPlaneInitialized, i.e. status.initialization.controlPlaneInitialized for v1beta2, and
// status.controlPlaneReady or the ControlPlaneInitialized condition for v1beta1. A Cluster that
// stops being ready or selected is disengaged at once, without a grace period, and engaged again
// when it is ready. Cluster API never clears the initialized flags, so with the default only a
// deletion disengages in practice; ControlPlaneAvailable follows the control plane's
// availability instead. A Cluster whose deletion has started (deletionTimestamp set) or that is
// gone is disengaged.
//
// # Credentials
//
// The kubeconfig is read from the Secret "<name>-kubeconfig" in the Cluster's namespace, data
// key "value", labeled cluster.x-k8s.io/cluster-name=<name> (the Cluster API contract). The
// Secret is watched: when its content changes (compared by hash) the cluster is engaged again
// with the new credentials at once, the new instance first and the old one disengaged after;
// changes that leave the content alone re-engage nothing. The kubeconfig is loaded through the
// hardened policy of mcr.dev/core/kubeconfig: inline certificates and tokens only; exec and
// auth-provider plugins, file references and insecure-skip-tls-verify are refused unless
// Options.Policy allows them. Credentials are never logged, and the provider's own host cache
// keeps the data of kubeconfig Secrets only, not of the other Cluster API Secrets (CA keys).
//
// # Failures
//
// A Cluster that is ready but cannot be engaged (Secret missing, kubeconfig refused, credentials
// refused, workload cluster unreachable, engagement refused) gets a Warning Event on the Cluster
// object, an error log line with the key "cluster", and counts in
// mcr_clusterapi_provider_errors_total and mcr_clusterapi_provider_broken_clusters. Transient
// failures are retried with backoff; refused kubeconfigs when the Secret changes. Every Cluster
// is handled on its own, so one broken or unreachable cluster never delays the others, and an
// engaged cluster whose new kubeconfig is broken stays engaged with its old one.
//
// See README.md for the RBAC the provider needs on the management cluster, the options and a
// quickstart.
package clusterapi
