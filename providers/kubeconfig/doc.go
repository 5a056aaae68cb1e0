// Package kubeconfig is a cluster provider that engages one cluster for every kubeconfig Secret
// on a host cluster, and keeps the fleet in step with those Secrets as they are created,
// rotated, relabeled and deleted.
//
// # What it watches
//
// Secrets on the host (the cluster whose rest.Config is passed to New) in Options.Namespace
// (default "mcr-system"), or in every namespace with Options.AllNamespaces, that carry the label
// Options.SecretLabel with the value "true" (default label "mcr.dev/kubeconfig"; set
// UpstreamSecretLabel, "sigs.k8s.io/multicluster-runtime-kubeconfig", to serve Secrets written
// for multicluster-runtime's kubeconfig provider). The kubeconfig is read from the data key
// Options.SecretKey (default "kubeconfig"); its current context is used.
//
// New builds a host cluster of its own whose cache holds only the selected Secrets, and Start
// runs it: the user only writes mcmanager.New(cfg, provider, opts). NewForHost reads Secrets
// through an existing cluster's cache instead, such as the manager's own.
//
// # Cluster names
//
// A cluster is named after its Secret: "<name>" (SecretName, the default, as in
// multicluster-runtime), or "<namespace>/<name>" with Options.ClusterName = NamespacedSecretName,
// which is collision free across namespaces. If two Secrets map to one name, the first keeps it;
// the other gets a ClusterNameConflict Event and is engaged once the first goes away.
//
// # Changes and readiness
//
// Informer events drive everything, so a rotation is noticed at once, without waiting for a
// resync. A change of the kubeconfig's content (a SHA-256 of the data key) re-engages the
// cluster: the new instance is engaged first, the old one disengaged after. Edits of labels,
// annotations or other data keys do nothing. Deleting the Secret or removing its label
// disengages the cluster. A cluster is engaged once its member answered a SelfSubjectReview with
// the new credentials (Options.SkipConnectivityCheck turns that off) and its cache synced, both
// within Options.CacheSyncTimeout. A member that does not answer, refuses the credentials or
// fails to engage is retried with exponential backoff (Options.RetryMinDelay to RetryMaxDelay);
// while it is retried after a rotation, the previous instance stays engaged. Members are handled
// in parallel: one unreachable member never delays another.
//
// # Credentials
//
// Kubeconfigs are loaded with mcr.dev/core/kubeconfig under Options.Policy, whose zero value
// refuses exec and auth-provider plugins, references to local files (certificate-authority,
// client-certificate, client-key, tokenFile, plugin paths) and insecure-skip-tls-verify: anyone
// who can write a Secret in the watched namespace would otherwise be able to run programs in, or
// read files of, the controller's pod. A refused kubeconfig disengages what the Secret described
// before and is reported three ways, each naming the Secret and never the credentials: a Warning
// Event with reason InvalidKubeconfig on the Secret, an error log line with the cluster under
// the key "cluster", and the counter mcr_kubeconfig_provider_errors_total{reason} in
// controller-runtime's metrics registry. Other Secrets are unaffected.
//
// The command cmd/kubeconfig-secret (package enroll) creates least-privilege ServiceAccount
// credentials on a member and stores them as a labeled Secret on the host. README.md has the
// RBAC the provider needs (also in config/rbac.yaml), the options and a quickstart.
package kubeconfig
