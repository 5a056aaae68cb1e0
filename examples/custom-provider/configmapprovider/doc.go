// Package configmapprovider is a complete, small cluster provider written on mcr's provider
// helpers, meant as the starting point for writing your own: its fleet is one ConfigMap in the
// host cluster whose keys are cluster names and whose values are kubeconfigs.
//
//	apiVersion: v1
//	kind: ConfigMap
//	metadata:
//	  name: clusters            # Options.Name
//	  namespace: mcr-system     # Options.Namespace
//	data:
//	  east: |                   # the cluster "east"
//	    apiVersion: v1
//	    kind: Config
//	    ...
//
// A real provider would keep credentials in Secrets (see mcr.dev/providers/kubeconfig); a
// ConfigMap keeps the example short and shows that the source of truth can be anything.
//
// # What a provider has to do, and who does it here
//
//   - Get and IndexField of multicluster.Provider, cluster bookkeeping, starting a cluster,
//     waiting (bounded) for its cache, applying every index exactly once, engaging it, and
//     disengaging it by canceling its context: the embedded clusters.Clusters does all of it.
//   - Discovering clusters: Start watches the ConfigMap with an informer of a host cluster whose
//     cache holds only that ConfigMap, so the provider needs RBAC for nothing else.
//   - Loading credentials safely: kubeconfig.Load (mcr.dev/core/kubeconfig) with the hardened
//     zero Policy refuses exec plugins, local files and insecure TLS, since whoever can edit the
//     ConfigMap controls what the kubeconfigs say.
//   - Re-engaging on credential changes, and only then: a kubeconfig's content hash is compared
//     before anything is built, and AddOrReplace engages the new instance before the old one is
//     disengaged.
//   - Never letting one cluster delay another: every cluster has a worker of its own; a failure
//     is logged with the key "cluster" and retried with backoff.
//
// conformance_test.go runs the mcr conformance suite (mcr.dev/conformance) against it.
package configmapprovider
