// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/clusters"
	"mcr.dev/core/internal/execplugin"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/redact"
)

// Defaults of Options.
const (
	DefaultRetryMinDelay = time.Second
	DefaultRetryMaxDelay = 5 * time.Minute
	DefaultResyncPeriod  = 10 * time.Minute

	// defaultQPS and defaultBurst are given to a member config that sets neither: the same as
	// controller-runtime's config loader gives the host.
	defaultQPS   = 20
	defaultBurst = 30

	// defaultExecTimeout and defaultExecMaxOutput bound each run of a member's exec
	// credential plugin: its time and what it may write to stdout (1 MiB).
	defaultExecTimeout   = execplugin.DefaultTimeout
	defaultExecMaxOutput = execplugin.DefaultMaxOutput
)

// Options is the vocabulary every provider shares. A provider embeds it in its own Options, so
// that the same field means the same thing with the same default in every provider; the
// provider's own fields live beside it. The zero value of every field selects its default, and
// SetDefaults is the one place they are applied, once.
type Options struct {
	// Policy says what a member kubeconfig may contain, for providers that read kubeconfigs.
	// A kubeconfig that breaks it is refused with an InvalidKubeconfig problem that names the
	// offending field and the Policy field that allows it.
	//
	// Defaults to the zero kubeconfig.Policy (mcr.dev/core/kubeconfig): no exec or
	// auth-provider plugins, no local file references, no insecure-skip-tls-verify.
	Policy kubeconfig.Policy

	// RESTOptions change each member's rest.Config before its cluster is built, in order. They
	// must be deterministic: a field set to a new value on every call (a new Transport, say)
	// makes every resync look like a credential change. An error is a problem of the member.
	//
	// Defaults to none. Configs that set neither QPS nor Burst get the QPS and Burst of the
	// manager's cluster defaults (clusters.Defaults), or else QPS 20 and Burst 30, first.
	RESTOptions []func(*rest.Config) error

	// ClusterOptions are passed to cluster.New for every member (scheme, cache options, ...),
	// after the manager's cluster defaults (clusters.Defaults), so that they win.
	//
	// Defaults to none: the manager's cluster defaults, else the client-go scheme, a cache of
	// all namespaces and REST mappers shared per endpoint (restmapper.Default; restmapper.Own
	// opts out).
	ClusterOptions []cluster.Option

	// CacheSyncTimeout bounds, for each member, the access check and the wait for its cache to
	// sync; a member that exceeds it is reported unreachable and retried with backoff while the
	// others carry on. It also bounds the wait for the provider's sources (host informers) in
	// Start.
	//
	// Defaults to clusters.DefaultCacheSyncTimeout (one minute).
	CacheSyncTimeout time.Duration

	// SkipAccessCheck engages members without first asking them, with a SelfSubjectReview,
	// whether they answer and accept the credentials. The check needs no RBAC beyond what every
	// authenticated user has; without it an unreachable member still fails, but only once its
	// cache has not synced within CacheSyncTimeout.
	//
	// Defaults to false: check.
	SkipAccessCheck bool

	// RetryMinDelay and RetryMaxDelay bound the per-member exponential backoff with which a
	// member that could not be reached or engaged is retried. A member whose credentials are
	// refused for good (policy, decoding) is not retried: the next change of its source is.
	//
	// Default to DefaultRetryMinDelay (1s) and DefaultRetryMaxDelay (5m); a RetryMaxDelay below
	// RetryMinDelay is raised to it.
	RetryMinDelay time.Duration
	RetryMaxDelay time.Duration

	// ResyncPeriod is how often every known member is synced again without any change: a
	// safety net for changes no event announced. Unchanged credentials cost a comparison.
	//
	// Defaults to DefaultResyncPeriod (10m); some providers choose a shorter default and say so.
	ResyncPeriod time.Duration

	// ExecTimeout bounds each run of a member's exec credential plugin (a kubeconfig's
	// users[].user.exec allowed by Policy.AllowExec, a ClusterProfile access provider). The kit
	// runs plugins itself, not through client-go: each in a process group of its own, with no
	// terminal and its stderr discarded (it may hold secrets); one run at a time per member,
	// its credential reused until its expirationTimestamp or a 401. A plugin that has not
	// answered in time is killed with every process it started, and so is a running plugin
	// when its member is disengaged, when an engage attempt fails and when the provider
	// stops. The member is reported with CredentialPluginFailed and retried with backoff.
	// The first run of an engage attempt is also bounded by CacheSyncTimeout.
	//
	// Defaults to 30s.
	ExecTimeout time.Duration

	// RefreshCredentialsInPlace keeps a member engaged when only its credentials change (a new
	// bearer token, token file, basic auth or client certificate for the same server, CA, TLS
	// and proxy settings and, where it can be told, the same user): the engaged cluster's
	// requests switch to the new credentials, after the access check accepted them, and its
	// cache, watches and the controllers' queues stay, so the old credentials can be revoked at
	// once. A change of anything else, of the user, or of an exec or auth-provider plugin's
	// settings still engages a new cluster (a plugin's own new credentials, at expiry or after
	// a 401, never do). Members the provider builds itself (Member.Cluster) are not concerned.
	// Set it to false to engage a new cluster, with a cold cache, on every credential change,
	// as multicluster-runtime's providers do.
	//
	// Defaults to true.
	RefreshCredentialsInPlace *bool

	// ExecMaxOutput bounds, in bytes, what a member's exec credential plugin may write to
	// stdout; a plugin that writes more is killed and its member reported with
	// CredentialPluginFailed (the note names the limit, never the output).
	//
	// Defaults to 1 MiB.
	ExecMaxOutput int64

	// EventRecorder records Events on the objects members come from (Secrets, Clusters,
	// profiles, ...). Providers without such objects (files, kind) record none.
	//
	// Defaults to the host cluster's recorder for the provider's reporting controller
	// ("mcr.dev/<provider>"); none when the provider has no host cluster.
	EventRecorder events.EventRecorder

	// Logger receives the provider's messages, with the member under the key "cluster".
	// SetDefaults wraps it with redact.Logger (mcr.dev/core/redact), so that URLs' user info
	// and queries, bearer tokens and the like are removed from every line, errors quoted from
	// client-go included.
	//
	// Defaults to controller-runtime's logger named after the provider, e.g.
	// "clusterapi-provider".
	Logger logr.Logger

	// inheritedQPS and inheritedBurst come from the manager's cluster defaults (inherit).
	inheritedQPS   float32
	inheritedBurst int

	// defaulted is set by SetDefaults, so that the kit's own calls (Members.Init, newEngine)
	// after the provider's withDefaults do nothing.
	defaulted bool
}

// inherit returns o under the manager's cluster defaults d, with the precedence
// clusters.Defaults describes: d's Scheme and Cache are applied before ClusterOptions, and d's
// QPS and Burst replace defaultQPS and defaultBurst for member configs that set neither, before
// RESTOptions run. The Engine builds every member with it once the manager has handed the
// provider its defaults (Members.SetClusterDefaults).
func (o Options) inherit(d clusters.Defaults) Options {
	o.ClusterOptions = append([]cluster.Option{d.ClusterOption()}, o.ClusterOptions...)
	if d.QPS != 0 || d.Burst != 0 {
		o.inheritedQPS, o.inheritedBurst = d.QPS, d.Burst
	}
	return o
}

// SetDefaults applies the defaults of every zero field; name is the provider's name, e.g.
// "clusterapi-provider", used for the default Logger. It applies them once: on options it has
// defaulted already (or a copy of them), it does nothing.
func (o *Options) SetDefaults(name string) {
	if o.defaulted {
		return
	}
	o.defaulted = true
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = clusters.DefaultCacheSyncTimeout
	}
	if o.RetryMinDelay <= 0 {
		o.RetryMinDelay = DefaultRetryMinDelay
	}
	if o.RetryMaxDelay <= 0 {
		o.RetryMaxDelay = DefaultRetryMaxDelay
	}
	if o.RetryMaxDelay < o.RetryMinDelay {
		o.RetryMaxDelay = o.RetryMinDelay
	}
	if o.ResyncPeriod <= 0 {
		o.ResyncPeriod = DefaultResyncPeriod
	}
	if o.ExecTimeout <= 0 {
		o.ExecTimeout = defaultExecTimeout
	}
	if o.ExecMaxOutput <= 0 {
		o.ExecMaxOutput = defaultExecMaxOutput
	}
	if o.RefreshCredentialsInPlace == nil {
		o.RefreshCredentialsInPlace = ptr.To(true)
	}
	if o.Logger.GetSink() == nil {
		o.Logger = ctrllog.Log.WithName(name)
	}
	o.Logger = redact.Logger(o.Logger)
}

// RESTConfig returns a copy of cfg finished for a member: QPS and Burst default to those of the
// manager's cluster defaults (Members.SetClusterDefaults), else to 20 and 30, when cfg sets
// neither, then RESTOptions apply in order. An error names the option as
// "Options.RESTOptions[i]".
func (o *Options) RESTConfig(cfg *rest.Config) (*rest.Config, error) {
	cfg = clusters.CopyConfig(cfg)
	if cfg.QPS == 0 && cfg.Burst == 0 {
		cfg.QPS, cfg.Burst = defaultQPS, defaultBurst
		if o.inheritedQPS != 0 || o.inheritedBurst != 0 {
			cfg.QPS, cfg.Burst = o.inheritedQPS, o.inheritedBurst
		}
	}
	for i, opt := range o.RESTOptions {
		if err := opt(cfg); err != nil {
			return nil, fmt.Errorf("Options.RESTOptions[%d]: %w", i, err)
		}
	}
	return cfg, nil
}
