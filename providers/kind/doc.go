// Package kind is a cluster provider that engages the clusters of the local kind installation
// (https://kind.sigs.k8s.io): every cluster `kind get clusters` lists, or those whose names
// start with Options.Prefix. It is meant for development and CI, where `kind create cluster`
// is how a fleet is made.
//
// # What it watches
//
// The provider uses the kind library (sigs.k8s.io/kind/pkg/cluster) exactly as the kind command
// line does: every Options.PollInterval (5s) it lists the kind clusters and reads each selected
// cluster's kubeconfig, both through the container engine (docker, podman or nerdctl; see
// Options.KindOptions). It needs no Kubernetes permissions anywhere: it talks to the local
// container engine only.
//
// # Cluster names
//
// A cluster is named after its kind cluster, exactly: `kind create cluster --name fleet-a` is
// engaged as "fleet-a" (not as its kubeconfig context, "kind-fleet-a"), and a cluster created
// without --name as "kind". Options.Prefix only selects clusters; it stays part of the name.
// Names are therefore stable across restarts of the controller and of the clusters.
//
// # Changes
//
// A cluster that appears in the list is engaged once it is ready (below). A cluster that
// disappears from the list is disengaged. Because kind generates a new CA and new credentials
// for every cluster it creates, the provider compares each cluster's credentials with the
// engaged ones at every poll: a cluster deleted and created again under the same name, even
// between two polls, is re-engaged (the new cluster is engaged first, then the old one
// disengaged), while a cluster whose kubeconfig is unchanged is left alone without creating
// anything.
//
// # Readiness
//
// A kind cluster is ready when its kubeconfig can be read and its API server answers the
// provider kit's access check (mcr.dev/core/providers/kit: an authenticated SelfSubjectReview)
// with that kubeconfig's credentials; it is then engaged once its cache has synced. Both waits
// are bounded by Options.CacheSyncTimeout. This keeps out
// clusters that `kind create cluster` has not finished yet, whose containers and admin.conf
// exist before the API server serves. Readiness is checked before engaging only: an engaged
// cluster that stops answering stays engaged until it is deleted.
//
// # Failures
//
// Every wait is bounded: the kind library runs the container engine without deadlines, so each
// call into it is waited for at most Options.CommandTimeout (30s). One broken cluster (its
// kubeconfig cannot be read, its node container is stopped or wedged, its API server does not
// answer) is not engaged, is logged with its name under the key "cluster" and is tried again at
// the next poll (an unreachable one also with backoff); the other clusters are not delayed. A cluster that is engaged stays engaged while its kubeconfig
// cannot be read (for example while its container is stopped), until it is gone from the list or
// its kubeconfig changes. A failed list (the engine is not running) changes nothing and is
// retried; Start never fails because of the engine.
//
// # Credentials
//
// kind's kubeconfigs hold inline client certificates. They are still loaded through
// mcr.dev/core/kubeconfig with Options.Policy, whose default (the hardened zero Policy) accepts
// everything kind generates and refuses exec plugins, auth-provider plugins, local file
// references and insecure-skip-tls-verify. Credentials are never logged.
//
// See README.md for options and a quickstart, and docs/providers/kind.md for what changed with
// the provider kit.
package kind
