// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
)

// providerName names the provider's logger, queue and Event reporting controller.
const providerName = "kubeconfig-provider"

const (
	// DefaultNamespace is the default of Options.Namespaces: the one namespace watched.
	DefaultNamespace = "mcr-system"

	// DefaultSecretLabel is the default of Options.SecretLabel. A Secret is picked up when it
	// carries this label with the value "true".
	DefaultSecretLabel = "mcr.dev/kubeconfig"

	// UpstreamSecretLabel is the label multicluster-runtime's kubeconfig provider looks for. Set
	// Options.SecretLabel to it to serve Secrets written for that provider unchanged.
	UpstreamSecretLabel = "sigs.k8s.io/multicluster-runtime-kubeconfig"

	// DefaultSecretKey is the default of Options.SecretKey, the same as multicluster-runtime's.
	DefaultSecretKey = "kubeconfig"

	// DefaultRetryMinDelay is the default of Options.RetryMinDelay, the same in every provider.
	DefaultRetryMinDelay = kit.DefaultRetryMinDelay
	// DefaultRetryMaxDelay is the default of Options.RetryMaxDelay, the same in every provider.
	DefaultRetryMaxDelay = kit.DefaultRetryMaxDelay

	// labelValue is the value of the Secret label that selects a Secret.
	labelValue = "true"
)

// Options configures a Provider. The zero value of every field selects its default; defaults are
// applied in one place, Options.withDefaults.
type Options struct {
	// Namespaces are the host namespaces whose Secrets are watched; with New, the provider's
	// host cache holds only these namespaces, so Roles in them are enough RBAC. Ignored when
	// AllNamespaces is set. Unlike in other providers, none does not mean every namespace (that
	// is AllNamespaces, an explicit choice): whoever can write Secrets in a watched namespace
	// can add clusters.
	//
	// Defaults to Namespace, else to DefaultNamespace ("mcr-system") alone. With more than one
	// namespace, use NamespacedSecretName to keep Secrets of different namespaces from claiming
	// the same name.
	Namespaces []string

	// Namespace is the former, single-namespace form of Namespaces, used when Namespaces is
	// empty.
	//
	// Deprecated: use Namespaces.
	Namespace string

	// AllNamespaces watches labeled Secrets in every namespace of the host. Anyone who can write
	// Secrets in any namespace can then add clusters; prefer Namespaces, and use
	// NamespacedSecretName to keep Secrets of different namespaces from claiming the same name.
	//
	// Defaults to false.
	AllNamespaces bool

	// SecretLabel is the label key that marks a Secret as a member kubeconfig; the value must be
	// "true". Removing the label disengages the cluster.
	//
	// Defaults to DefaultSecretLabel ("mcr.dev/kubeconfig"); UpstreamSecretLabel selects the
	// Secrets of multicluster-runtime's kubeconfig provider.
	SecretLabel string

	// SecretKey is the key in the Secret's data that holds the kubeconfig.
	//
	// Defaults to DefaultSecretKey ("kubeconfig").
	SecretKey string

	// ClusterName derives the cluster name from a Secret. It must depend only on the Secret's
	// namespace, name and labels or annotations that do not change, since a new name means a
	// different cluster: the old name is disengaged and the new one engaged. Two Secrets that map
	// to one name conflict: the first keeps it, the other gets a ClusterNameConflict Event until
	// the first goes away.
	//
	// Defaults to SecretName: the cluster is named after the Secret, as in multicluster-runtime.
	ClusterName func(*corev1.Secret) multicluster.ClusterName

	// HostClusterOptions are passed to cluster.New for the host cluster that New builds. They are
	// applied after the provider's own, which restrict the host cache to labeled Secrets of the
	// watched namespace. Not used with NewForHost.
	//
	// Defaults to none.
	HostClusterOptions []cluster.Option

	// Options are the fields every provider shares (Policy, RESTOptions, ClusterOptions,
	// CacheSyncTimeout, SkipAccessCheck, retry delays, ResyncPeriod, EventRecorder, Logger),
	// with the defaults documented there. Whoever can write a Secret in the watched namespace
	// controls the kubeconfig, so keep Policy strict. Events are recorded on the Secrets as
	// EventSource; the Logger is named "kubeconfig-provider".
	kit.Options
}

// withDefaults is the only place defaults are applied.
func (o Options) withDefaults() Options {
	o.Namespaces = slices.DeleteFunc(slices.Clone(o.Namespaces), func(ns string) bool { return ns == "" })
	if len(o.Namespaces) == 0 && o.Namespace != "" {
		o.Namespaces = []string{o.Namespace}
	}
	if len(o.Namespaces) == 0 {
		o.Namespaces = []string{DefaultNamespace}
	}
	o.Namespace = ""
	if o.SecretLabel == "" {
		o.SecretLabel = DefaultSecretLabel
	}
	if o.SecretKey == "" {
		o.SecretKey = DefaultSecretKey
	}
	if o.ClusterName == nil {
		o.ClusterName = SecretName
	}
	o.SetDefaults(providerName)
	return o
}

// SecretName names a cluster after its Secret: "<name>". It is the default of
// Options.ClusterName.
func SecretName(s *corev1.Secret) multicluster.ClusterName {
	return multicluster.ClusterName(s.Name)
}

// NamespacedSecretName names a cluster "<namespace>/<name>" after its Secret, so that Secrets
// of the same name in different namespaces are different clusters. Use it with AllNamespaces or
// several Namespaces.
func NamespacedSecretName(s *corev1.Secret) multicluster.ClusterName {
	return multicluster.ClusterName(s.Namespace + "/" + s.Name)
}
