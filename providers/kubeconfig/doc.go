// Package kubeconfig is a cluster provider that engages one cluster for every kubeconfig Secret
// on a host cluster, and keeps the fleet in step with those Secrets as they are created,
// rotated, relabeled and deleted. It runs on the provider kit (mcr.dev/core/providers/kit): the
// kit's engine watches the Secrets, syncs each one by its namespace and name, and engages,
// reports and retries the same way as in every other provider.
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
// the other gets a ClusterNameConflict Event and is engaged once the first goes away or maps to
// another name.
//
// # Changes, credentials and problems
//
// A change of the kubeconfig's credentials or endpoint re-engages the cluster, the new instance
// first; deleting the Secret or removing its label disengages it. Kubeconfigs are loaded with
// mcr.dev/core/kubeconfig under Options.Policy, whose zero value refuses exec and auth-provider
// plugins, local file references and insecure-skip-tls-verify. A kubeconfig that is refused, a
// member that does not answer and refused credentials are reported as a Warning Event on the
// Secret, an error log line and the counter mcr_kubeconfig_provider_errors_total{reason}, never
// with the credentials; a cluster that is engaged stays engaged with the credentials that work.
//
// docs/providers/kubeconfig.md is the full description: options, Events, RBAC and what changed
// when the provider moved onto the provider kit. The command cmd/kubeconfig-secret (package
// enroll) creates least-privilege ServiceAccount credentials on a member and stores them as a
// labeled Secret on the host.
package kubeconfig
