// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kind

import (
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"mcr.dev/core/providers/kit"
)

// providerName names the provider's logger and queue.
const providerName = "kind-provider"

// Defaults of Options.
const (
	DefaultPollInterval   = 5 * time.Second
	DefaultCommandTimeout = 30 * time.Second
)

// Options configures a Provider. The zero value of every field selects its default; defaults are
// applied in one place, Options.withDefaults.
type Options struct {
	// Prefix selects the kind clusters to engage: only those whose name starts with it. The
	// prefix stays part of the cluster name.
	//
	// Defaults to "": every kind cluster.
	Prefix string

	// PollInterval is how often the provider lists the kind clusters and reads their
	// kubeconfigs, to notice clusters created, deleted, and deleted and created again.
	//
	// Defaults to DefaultPollInterval (5s).
	PollInterval time.Duration

	// KindOptions configure the kind library's provider (sigs.k8s.io/kind/pkg/cluster), for
	// example kindcluster.ProviderWithPodman() to choose the container engine.
	//
	// Defaults to what the kind command line does: the engine named by
	// $KIND_EXPERIMENTAL_PROVIDER (docker, podman, nerdctl, finch, nerdctl.lima) when set, else
	// auto-detection (docker, then nerdctl, then podman, falling back to docker).
	KindOptions []kindcluster.ProviderOption

	// Internal selects the kubeconfig for use inside the kind network (the server is the
	// control-plane container's name and port 6443) instead of the one for the host (the server
	// is the port kind published on the host). Set it when the controller runs in a container
	// attached to the "kind" network, for example in a pod of another kind cluster.
	//
	// Defaults to false: the host kubeconfig, as `kind get kubeconfig` prints it.
	Internal bool

	// CommandTimeout bounds how long the provider waits for one call into the kind library
	// (listing clusters, reading one cluster's kubeconfig, detecting the container engine), each
	// of which runs container engine commands. A call that takes longer is reported as an error
	// for that cluster (or, for the list, for that poll) and left to finish in the background.
	//
	// Defaults to DefaultCommandTimeout (30s).
	CommandTimeout time.Duration

	// Options are the fields every provider shares (Policy, RESTOptions, ClusterOptions,
	// CacheSyncTimeout, SkipAccessCheck, retry delays, ResyncPeriod, EventRecorder, Logger),
	// with the defaults documented there. kind generates kubeconfigs with inline credentials
	// only, which the zero Policy accepts; anything else in a kind kubeconfig was not written by
	// kind and is refused. The provider has no host cluster and records no Events. The Logger
	// is named "kind-provider".
	kit.Options
}

// withDefaults is the only place defaults are applied.
func (o Options) withDefaults() Options {
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if len(o.KindOptions) == 0 {
		if opt := runtimeFromEnv(); opt != nil {
			o.KindOptions = []kindcluster.ProviderOption{opt}
		}
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = DefaultCommandTimeout
	}
	o.SetDefaults(providerName)
	return o
}
