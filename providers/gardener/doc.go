// Package gardener is a cluster provider for Gardener (gardener.cloud) landscapes. It engages one
// cluster per shoot, in either of Gardener's two places to run a controller:
//
//   - TopologyGarden (the default) runs against the garden cluster, the Gardener API, and engages
//     every usable Shoot with short-lived admin credentials it requests from the Shoot's
//     adminkubeconfig subresource and renews before they expire.
//   - TopologySeed runs against a seed cluster and engages every shoot control plane the seed
//     hosts, with the kubeconfig gardenlet keeps in the Secret "gardener" of its control-plane
//     namespace, following the renewals of the token in it.
//
// It uses Gardener's published API packages only (core/v1beta1 Shoot,
// authentication/v1alpha1 AdminKubeconfigRequest, extensions/v1alpha1 Cluster), none of
// Gardener's clients or utilities.
//
// # What it watches
//
// Garden: core.gardener.cloud/v1beta1 Shoots in Options.Namespaces (project namespaces, all by
// default), and nothing else. Seed: extensions.gardener.cloud/v1alpha1 Cluster objects
// (cluster-scoped, one per shoot control plane) and the Secrets named "gardener", through a
// field selector, keeping only their kubeconfig. New builds a host cluster with these informers,
// which Start runs; NewForHost reads through a cluster the caller runs instead (the manager's
// local cluster, say), whose scheme must hold these types. No SetupWithManager is needed.
// Options.Namespaces, Options.Selector and Options.Filter select Shoots (in the seed, the Shoot
// gardenlet embeds in the Cluster object).
//
// # Cluster names
//
// Garden: "<project namespace>/<shoot>" (ShootClusterName), e.g. "garden-dev/my-shoot", unique
// because Shoot names are unique within a project. Seed: the Cluster object's name, which is the
// shoot's technical ID and control-plane namespace (SeedClusterName), e.g.
// "shoot--dev--my-shoot". Names never start with a slash; ClusterKey maps them back. They are
// stable across restarts.
//
// # Usable shoots
//
// A selected Shoot is engaged while Options.IsUsable says so: ShootUsable in the garden (not being
// deleted; neither hibernated nor hibernating nor waking up; last operation set and, if it is a
// Create, Succeeded; condition APIServerAvailable not False), ShootAwake in the seed (not being
// deleted, not hibernated), because the status copy in a Cluster object is only refreshed when
// gardenlet reconciles the Shoot. A Shoot that stops being usable or selected is disengaged at
// once, without a grace period, and engaged again when it is usable.
//
// # Credentials
//
// Garden: the provider POSTs an AdminKubeconfigRequest with spec.expirationSeconds =
// Options.ExpirationSeconds (default 3600, at least 600 as Gardener requires) to
// shoots/<name>/adminkubeconfig, and goes by the returned status.expirationTimestamp. At
// Options.RefreshFraction of the lifetime (default 0.8) it requests new credentials and engages
// the cluster again with them: the new instance is engaged first and the old one disengaged
// after, while the old credentials are still valid. It requests new credentials at once when the
// Shoot's certificate authority rotation moves on, its advertised addresses change or the Shoot
// is recreated (credentialsEpoch). If renewal keeps failing, the cluster stays engaged until its
// credentials expire and is disengaged then (CredentialsExpired). Seed: the kubeconfig is read from
// Secret "gardener", key "kubeconfig", in the namespace named like the Cluster object; when the
// endpoint or credentials in it change (gardener-resource-manager renewed the token) the cluster
// is engaged again, and only then. A kubeconfig whose user has no credentials yet (token not written) is waited
// for, without a Warning.
//
// Every kubeconfig is loaded through the hardened policy of mcr.dev/core/kubeconfig (no exec or
// auth-provider plugins, no local files, no insecure-skip-tls-verify unless Options.Policy
// allows them). Credentials are never logged.
//
// # Failures
//
// A usable Shoot that cannot be engaged (credentials refused by Gardener or by the shoot,
// kubeconfig refused, shoot unreachable, engagement refused) gets a Warning Event on its Shoot or
// Cluster object, an error log line with the key "cluster", and counts in
// mcr_gardener_provider_errors_total and mcr_gardener_provider_broken_clusters. Every object is
// synced on its own, so one broken shoot never delays the others.
//
// See README.md for the RBAC each topology needs, the options and a quickstart.
package gardener
