// Package clusterprofile is a cluster provider that engages one cluster for every ready
// ClusterProfile (multicluster.x-k8s.io/v1alpha1, the Cluster Inventory API of KEP-4322) on a
// hub cluster, reaching each member through the operator's KEP-5339 access providers (exec
// credential plugins) or, deprecated, through a kubeconfig Secret, and exposes each member's
// KEP-2149 identity.
//
// # What it watches
//
// On the hub (host) cluster: ClusterProfiles and, with Options.Secret, the Secrets labeled
// x-k8s.io/cluster-inventory-consumer=<consumer>, through informers of its own that Start runs
// (New), or through the cache of a cluster the caller runs, such as the manager's own
// (NewForHost). No SetupWithManager is needed: the manager runs the provider. Options.Namespaces,
// Options.Selector and Options.Filter narrow the profiles it serves.
//
// # Cluster names
//
// A ClusterProfile is engaged as
//
//	<namespace>/<name>
//
// of the profile (ClusterName; ClusterKey maps back), as in multicluster-runtime's
// cluster-inventory-api provider. ClusterProfiles are namespaced, so names are unique and stable
// across restarts.
//
// # Readiness
//
// A selected profile is engaged once Options.IsReady says it is ready: by default its
// ControlPlaneHealthy condition is True (ControlPlaneHealthy; ConditionsTrue and Always are
// alternatives). An engaged profile that stops being ready stays engaged for
// Options.UnreadyGracePeriod (default one minute) and is disengaged if it is still unready then;
// it is engaged again when it is ready. A profile that is deleted, being deleted, or no longer
// selected is disengaged at once.
//
// # Credentials
//
// Access providers (KEP-5339): the operator's provider file (RegisterProviderFileFlag,
// LoadProviderFile; flag -clusterprofile-provider-file) lists exec credential plugins by name.
// The first of them, in file order, that the profile's status.accessProviders (or the deprecated
// status.credentialProviders) lists gives the member's rest.Config: the profile's server, CA,
// TLS server name and proxy, with an exec plugin that client-go runs to get credentials, and
// that receives the profile's client.authentication.k8s.io/exec extension as
// ExecCredential spec.cluster.config. Profile-sourced plugin args and env are ignored unless the
// provider's policy in the file allows them (the KEP default). The config is built with
// sigs.k8s.io/cluster-inventory-api/pkg/access on a private deep copy per build, so the
// operator's exec configs are never mutated and args never accumulate; README.md lists what
// else is repaired on top of that package.
//
// Secret strategy (deprecated, Options.Secret): the kubeconfig under data key "Config" of the one
// Secret in the profile's namespace labeled with the consumer and x-k8s.io/cluster-profile=<name>,
// loaded under the hardened policy of mcr.dev/core/kubeconfig (no exec or auth-provider plugins,
// file references or insecure-skip-tls-verify unless Options.Policy allows them).
//
// Either way the provider compares credentials by content: the endpoint and the exec plugin
// exactly as it would run, or the kubeconfig's endpoint and credentials (clusters.EqualConfigs). A
// profile whose conditions, properties, version or labels change is never engaged again; a
// changed server, CA or plugin configuration engages it again at once, the new instance first.
// Tokens that a plugin returns are refreshed by client-go itself (on expiry and on 401), without
// re-engaging. Credentials are never logged.
//
// # Identity
//
// Provider.Identity returns the KEP-2149 identity of an engaged cluster, the
// cluster.clusterset.k8s.io id and the clusterset.k8s.io ClusterSet from the profile's
// status.properties.
//
// # Failures
//
// A ready profile that cannot be engaged (no matching access provider, plugin failing, bad
// Secret, member unreachable, credentials refused) gets a Warning Event on the ClusterProfile, an
// error log line with the key "cluster", and counts in mcr_clusterprofile_provider_errors_total
// and mcr_clusterprofile_provider_broken_clusters. Every profile is handled on its own, so one
// broken member never delays the others, and an engaged cluster whose new credentials are broken
// stays engaged with its old ones.
//
// # Exec plugins
//
// Package mcr.dev/providers/clusterprofile/plugin helps write exec credential plugins for
// ClusterProfiles, and cmd/clusterprofile-token-plugin is a reference plugin that returns a
// member's token from a Secret on the hub.
//
// See README.md for the RBAC the provider needs on the hub, the provider file, the options and a
// quickstart.
package clusterprofile
