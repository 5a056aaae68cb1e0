// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/internal/accesscheck"
	"mcr.dev/core/internal/credswap"
	"mcr.dev/core/internal/execplugin"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/redact"
)

// eventAction is the action of every Event the kit records.
const eventAction = "Engage"

// anyPolicy allows everything a kubeconfig.Policy field can allow: CheckRESTConfig then refuses
// only what no Policy allows, a server with user info, a query or a fragment, or none at all.
var anyPolicy = kubeconfig.Policy{AllowExec: true, AllowExecEnv: "*", AllowAuthProvider: true, AllowLocalFiles: true,
	AllowInsecure: true, AllowPlainHTTP: true, AllowProxyURL: true}

// Reasons of the Events and metrics of the engage step, the same in every provider. Warnings are
// recorded when a member's problem appears or changes, not again while it stays the same; each
// attempt still counts in the provider's errors metric. Providers add reasons of their own for
// what only they can get wrong (a Secret missing, a name conflict, ...).
const (
	// ReasonInvalidKubeconfig (Warning): the member's kubeconfig cannot be decoded or uses a
	// feature Options.Policy refuses (the note names the field and the Policy field that
	// allows it). Not retried: the next change of the source is.
	ReasonInvalidKubeconfig = kubeconfig.ReasonInvalid

	// ReasonClusterSetupFailed (Warning): Options.RESTOptions or cluster.New refused the
	// member's config, or its server is no https or http URL or carries user info, a query or
	// a fragment, which no kubeconfig.Policy allows (the metric reason is then
	// kubeconfig.ReasonURLData). Not retried: the next change of the source is.
	ReasonClusterSetupFailed = "ClusterSetupFailed"

	// ReasonUnauthorized (Warning): the member refused the credentials. Retried with backoff,
	// and when the source changes.
	ReasonUnauthorized = "Unauthorized"

	// ReasonClusterUnreachable (Warning): the member did not answer the access check, or its
	// cache did not sync within Options.CacheSyncTimeout. Retried with backoff.
	ReasonClusterUnreachable = "ClusterUnreachable"

	// ReasonCredentialPluginFailed (Warning): the member's exec credential plugin did not
	// produce credentials: it could not be started, exited with an error, wrote more than
	// Options.ExecMaxOutput, did not answer within Options.ExecTimeout (or the access check's
	// Options.CacheSyncTimeout), or answered with something that is no usable ExecCredential.
	// The note names the plugin's command and what happened, never what the plugin wrote.
	// Retried with backoff; a plugin configuration no controller can run (interactiveMode
	// Always, an unsupported apiVersion) is retried when the source changes.
	ReasonCredentialPluginFailed = "CredentialPluginFailed"

	// reasonEngageFailed (Warning): the manager refused the cluster (an Aware returned an
	// error). Retried with backoff.
	reasonEngageFailed = "EngageFailed"

	// ReasonClusterEngaged (Normal): the member is engaged.
	ReasonClusterEngaged = "ClusterEngaged"

	// ReasonCredentialsRotated (Normal): the member's credentials or endpoint changed and it
	// was engaged again with them.
	ReasonCredentialsRotated = "CredentialsRotated"

	// ReasonClusterDisengaged (Normal): the member was disengaged although its object still
	// exists (it stopped being ready or selected).
	ReasonClusterDisengaged = "ClusterDisengaged"
)

// Result is what a sync asks the Engine to do with its key.
type Result struct {
	// Retry asks for the key to be synced again after the key's next backoff delay.
	Retry bool

	// After, when Retry is false and After is positive, asks for the key to be synced again
	// once After has passed (for example when a grace period ends or credentials expire), and
	// resets its backoff.
	After time.Duration

	// Reason is the reason of the problem Engage or Fail reported, empty when there was none,
	// for a provider that reacts to one failure in particular (credentials the member refused,
	// say). The Engine does not read it.
	Reason string
}

// merge returns the result that satisfies both r and o: a retry when either retries, else the
// earlier positive After.
func (r Result) merge(o Result) Result {
	if r.Retry || o.Retry {
		return Result{Retry: true, Reason: r.Reason + o.Reason}
	}
	switch {
	case r.After <= 0:
		return o
	case o.After <= 0 || r.After < o.After:
		return r
	}
	return o
}

// Member is one member cluster as the provider's source of truth describes it now.
type Member struct {
	// Name is the member's cluster name. It must not be empty: "" is the manager's name for
	// its local cluster.
	Name multicluster.ClusterName

	// Config is the member's endpoint and credentials. Engage copies it and applies
	// Options.RESTOptions; a member whose finished config equals the engaged one (by
	// clusters.EqualConfigs) is left alone, any other change re-engages it.
	Config *rest.Config

	// Cluster, instead of Config, is a cluster the provider built itself (a scope over a cache
	// it shares between members, say). It is engaged as it is, without the access check, and
	// replaces the engaged instance when it is a different one.
	Cluster cluster.Cluster

	// Regarding is the object the member comes from, which Events are recorded on; Related,
	// which may be nil, is the object its credentials come from (a Secret, say). With a nil
	// Regarding, outcomes are logged only.
	Regarding client.Object
	Related   runtime.Object

	// From says where the credentials come from in Event notes and logs, e.g. "kubeconfig
	// Secret mcr-system/east". It must not contain credentials.
	From string
}

// memberState is what the Engine remembers about one member. The fields are guarded by the
// Engine's mu; only the sync of the member's key changes engaged and config.
type memberState[K comparable] struct {
	key K
	// engaged is the instance engaged for the member (nil when none), config its finished
	// config, engagedCtx the context it was engaged with.
	engaged    cluster.Cluster
	config     *rest.Config
	engagedCtx context.Context
	// changing is set while the sync replaces or removes engaged, so that the end of its
	// context is not taken for a member that stopped on its own.
	changing bool
	problem  Problem
	// source runs the exec plugin of the engaged instance, nil when it has none.
	source *execplugin.Source
	// holder holds the credentials of the engaged instance when they can be replaced in
	// place (Options.RefreshCredentialsInPlace), else nil.
	holder *credswap.Holder
}

// state returns the state of name, creating it for key.
func (e *Engine[K]) state(key K, name multicluster.ClusterName) *memberState[K] {
	e.mu.Lock()
	defer e.mu.Unlock()
	st, ok := e.members[name]
	if !ok {
		st = &memberState[K]{key: key}
		e.members[name] = st
	}
	st.key = key
	return st
}

// IsEngaged reports whether the member name is engaged at the moment.
func (e *Engine[K]) IsEngaged(name multicluster.ClusterName) bool {
	e.mu.Lock()
	st := e.members[name]
	var engaged cluster.Cluster
	if st != nil {
		engaged = st.engaged
	}
	e.mu.Unlock()
	if engaged == nil {
		return false
	}
	cl, err := e.opts.Clusters.GetTyped(context.Background(), name)
	return err == nil && cl == engaged
}

// Engage brings the member m of key to engaged with the member's current credentials: it
// finishes the config (Options.RESTOptions, default QPS and Burst), builds the cluster with
// Options.ClusterOptions (both under the manager's cluster defaults, see SetClusterDefaults),
// checks access (unless Options.SkipAccessCheck), engages it in the
// provider's Clusters (replacing an instance with other credentials), and reports the outcome
// on m.Regarding and in the log. A member already engaged with equal credentials costs a
// comparison. Problems are reported as Fail reports them; the Result asks for a retry when the
// problem may go away on its own.
//
// The engaged cluster lives as long as the provider, never as long as the sync. When it stops
// on its own, the Engine queues its key again with backoff.
func (e *Engine[K]) Engage(ctx context.Context, key K, m Member) Result {
	log := e.log.WithValues("cluster", m.Name)
	if m.Name == "" {
		return e.Fail(key, m, Permanent(ReasonClusterSetupFailed, errors.New("the provider gave the member an empty cluster name")))
	}
	st := e.state(key, m.Name)
	engaged := e.IsEngaged(m.Name)

	cl, cfg := m.Cluster, (*rest.Config)(nil)
	var source *execplugin.Source
	var holder *credswap.Holder
	if cl == nil {
		var err error
		opts := e.memberOptions()
		if cfg, err = opts.RESTConfig(m.Config); err != nil {
			return e.Fail(key, m, Permanent(ReasonClusterSetupFailed, err))
		}
		// A URL with credentials must never reach client-go, whose errors and klog lines
		// quote it.
		if err := kubeconfig.CheckRESTConfig(cfg, anyPolicy); err != nil {
			return e.Fail(key, m, Permanent(ReasonClusterSetupFailed, err))
		}
		e.mu.Lock()
		same := engaged && clusters.EqualConfigs(st.config, cfg)
		engagedSource, engagedHolder, engagedConfig := st.source, st.holder, st.config
		e.mu.Unlock()
		if same {
			// The engaged instance's plugin still has to answer (from its cache until the
			// credential expires): one that stopped working is reported, the member stays.
			if err := e.firstCredential(ctx, m.Name, engagedSource); err != nil {
				if ctx.Err() != nil {
					return Result{}
				}
				return e.Fail(key, m, Retryable(ReasonCredentialPluginFailed, withFrom(m, err)))
			}
			e.problems.Resolve(&st.problem, log)
			return Result{}
		}
		if engaged && engagedHolder != nil {
			if res, done := e.refreshInPlace(ctx, key, m, st, engagedHolder, engagedConfig, cfg); done {
				return res
			}
		}
		// The cluster gets a copy of its own, and cfg is kept to compare with the next one. An
		// exec plugin in it is run by a source the Engine owns, never by client-go.
		var built *rest.Config
		built, source, err = e.execConfig(m.Name, clusters.CopyConfig(cfg))
		if err != nil {
			return e.Fail(key, m, Permanent(ReasonCredentialPluginFailed, withFrom(m, err)))
		}
		if source == nil && *opts.RefreshCredentialsInPlace {
			// Credentials a plugin or a Transport of the caller's provide are not swappable:
			// such members are engaged anew on every change, as without the option.
			if swappable, h, err := credswap.Config(built); err == nil {
				built, holder = swappable, h
			}
		}
		if cl, err = cluster.New(built, opts.ClusterOptions...); err != nil {
			e.closeSource(source)
			return e.Fail(key, m, Permanent(ReasonClusterSetupFailed, fmt.Errorf("creating the cluster: %w", err)))
		}
		if err := e.firstCredential(ctx, m.Name, source); err != nil {
			e.closeSource(source)
			if ctx.Err() != nil {
				return Result{}
			}
			return e.Fail(key, m, Retryable(ReasonCredentialPluginFailed, withFrom(m, err)))
		}
		if !e.opts.Options.SkipAccessCheck {
			if err := e.checkAccess(ctx, cl.GetConfig(), cl.GetHTTPClient()); err != nil {
				cl.GetHTTPClient().CloseIdleConnections()
				e.closeSource(source)
				if ctx.Err() != nil {
					return Result{}
				}
				reason := ReasonClusterUnreachable
				if errors.Is(err, accesscheck.ErrUnauthorized) {
					reason = ReasonUnauthorized
				}
				return e.Fail(key, m, Retryable(reason, err))
			}
		}
	} else {
		e.noteDefaultsUnused()
		// st.engaged is cleared under e.mu when an engaged instance's context ends.
		e.mu.Lock()
		same := engaged && st.engaged == cl
		e.mu.Unlock()
		if same {
			e.problems.Resolve(&st.problem, log)
			return Result{}
		}
	}

	e.mu.Lock()
	st.changing = true
	aware := e.aware
	e.mu.Unlock()
	err := e.opts.Clusters.AddOrReplace(ctx, m.Name, cl, &engageHook[K]{e: e, st: st, cl: cl, aware: aware, source: source, holder: holder})
	e.mu.Lock()
	st.changing = false
	e.mu.Unlock()
	if err != nil {
		e.closeSource(source)
		if ctx.Err() != nil {
			return Result{}
		}
		reason := reasonEngageFailed
		if errors.Is(err, clusters.ErrCacheSyncTimeout) {
			reason = ReasonClusterUnreachable
		}
		return e.Fail(key, m, Retryable(reason, err))
	}
	current, err := e.opts.Clusters.GetTyped(ctx, m.Name)
	if current != cl {
		// Not engaged (equal to the engaged instance, or gone at once): its plugin stops here.
		e.closeSource(source)
	}
	if err != nil {
		// Engaged and gone again at once (its cache stopped): the next sync starts over.
		return Result{Retry: true}
	}
	e.mu.Lock()
	rotated := engaged && current != st.engaged
	st.engaged, st.config = current, cfg
	if current == cl {
		st.source, st.holder = source, holder
	}
	e.mu.Unlock()
	e.problems.Resolve(&st.problem, log)

	from := ""
	if m.From != "" {
		from = " from " + m.From
	}
	switch {
	case rotated:
		log.Info("Re-engaged cluster with new credentials" + from)
		e.events.record(m.Regarding, m.Related, corev1.EventTypeNormal, ReasonCredentialsRotated, "Cluster engaged again with new credentials"+from)
	case !engaged:
		log.Info("Engaged cluster" + from)
		e.events.record(m.Regarding, m.Related, corev1.EventTypeNormal, ReasonClusterEngaged, "Cluster engaged"+from)
	default:
		// AddOrReplace found the new instance equal to the engaged one: nothing was replaced.
		log.V(1).Info("Credentials changed in form only")
	}
	return Result{}
}

// checkAccess runs the access check (accesscheck.Check or Served) within Options.CacheSyncTimeout.
func (e *Engine[K]) checkAccess(ctx context.Context, cfg *rest.Config, hc *http.Client) error {
	ctx, cancel := context.WithTimeout(ctx, e.opts.Options.CacheSyncTimeout)
	defer cancel()
	if e.opts.NotFoundMeansNotServed {
		return accesscheck.Served(ctx, cfg, hc)
	}
	return accesscheck.Check(ctx, cfg, hc)
}

// Disengage removes the engaged instance of the member name, if any, and forgets what the
// Engine knew about it (its problem included). why completes "Disengaged cluster: " in the log;
// regarding, when not nil, gets a ClusterDisengaged Event if a member was engaged (pass nil when
// the object is gone). It returns once the instance has stopped.
func (e *Engine[K]) Disengage(name multicluster.ClusterName, regarding client.Object, why string) {
	log := e.log.WithValues("cluster", name)
	e.mu.Lock()
	st, known := e.members[name]
	wasEngaged := false
	if known {
		delete(e.members, name)
		st.engagedCtx, st.changing = nil, true
		wasEngaged = st.engaged != nil
	}
	e.mu.Unlock()
	if !known {
		log.V(1).Info("Cluster not engaged: " + why)
		return
	}
	// Not Resolve: the member goes, its problem is not solved (it may be why it goes).
	e.problems.Drop(&st.problem)
	if wasEngaged {
		e.opts.Clusters.Remove(name)
	}
	if !wasEngaged {
		log.V(1).Info("Cluster not engaged: " + why)
		return
	}
	log.Info("Disengaged cluster: " + why)
	e.events.record(regarding, nil, corev1.EventTypeNormal, ReasonClusterDisengaged, "Cluster disengaged: "+why)
}

// Fail reports a problem of member m of key: counted in the errors metric every time, logged and
// recorded as a Warning Event on m.Regarding only when it appears or changes. An engaged member
// stays engaged with the credentials that work. The Result retries when err is Retryable. err
// is passed through redact.Error with the redact.Secrets of m.Config, so that neither the credential values
// of the member nor what redact.Text recognizes are reported.
func (e *Engine[K]) Fail(key K, m Member, err error) Result {
	err = redact.Error(err, redact.Secrets(m.Config)...)
	st := e.state(key, m.Name)
	p := problemOf(err)
	e.problems.Report(&st.problem, e.log.WithValues("cluster", m.Name), m.Regarding, m.Related, p.reason, p.metricReason, err)
	return Result{Retry: p.retry, Reason: p.reason}
}

// problemError is an error with the reason it is reported under. Build one with Permanent or
// Retryable; an error without one is reported as EngageFailed and retried.
type problemError struct {
	reason       string
	metricReason string
	retry        bool
	err          error
}

func (p *problemError) Error() string { return p.err.Error() }
func (p *problemError) Unwrap() error { return p.err }

// Reason returns the Event reason of the problem.
func (p *problemError) Reason() string { return p.reason }

// Permanent marks err as a problem that retrying does not solve (the member's source must
// change), reported under reason. For kubeconfig errors the metric reason is refined to
// kubeconfig.Reason (ExecPlugin, LocalFileReference, ...).
func Permanent(reason string, err error) error { return newProblem(reason, false, err) }

// Retryable marks err as a problem that may go away on its own (an unreachable member),
// reported under reason and retried with backoff.
func Retryable(reason string, err error) error { return newProblem(reason, true, err) }

func newProblem(reason string, retry bool, err error) error {
	metric := reason
	if r := kubeconfig.Reason(err); r != "" && r != kubeconfig.ReasonInvalid {
		metric = r
	}
	return &problemError{reason: reason, metricReason: metric, retry: retry, err: err}
}

// WithMetricReason returns err with metricReason as the label of its count, for a provider that
// tells finer reasons apart in its metric than in its Events.
func WithMetricReason(err error, metricReason string) error {
	p := problemOf(err)
	p.metricReason = metricReason
	return p
}

func problemOf(err error) *problemError {
	var p *problemError
	if errors.As(err, &p) {
		c := *p
		c.err = err
		return &c
	}
	return &problemError{reason: reasonEngageFailed, metricReason: reasonEngageFailed, retry: true, err: err}
}

// engageHook engages with the manager's Aware and remembers the context of the instance, so
// that the Engine notices when the instance stops on its own.
type engageHook[K comparable] struct {
	e     *Engine[K]
	st    *memberState[K]
	cl    cluster.Cluster
	aware multicluster.Aware
	// source runs the instance's exec plugin, if any; it is closed when the instance ends.
	source *execplugin.Source
	// holder holds the instance's replaceable credentials, if any; its idle connections are
	// closed when the instance ends.
	holder *credswap.Holder
}

func (h *engageHook[K]) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	if h.aware != nil {
		if err := h.aware.Engage(ctx, name, cl); err != nil {
			return err
		}
	}
	e, st := h.e, h.st
	if src := h.source; src != nil {
		context.AfterFunc(ctx, func() { e.closeSource(src) })
	}
	if holder := h.holder; holder != nil {
		context.AfterFunc(ctx, holder.Close)
	}
	e.mu.Lock()
	st.engagedCtx = ctx
	e.mu.Unlock()
	context.AfterFunc(ctx, func() {
		e.mu.Lock()
		lost := st.engagedCtx == ctx && !st.changing && e.members[name] == st
		if lost {
			st.engaged, st.config, st.engagedCtx, st.source, st.holder = nil, nil, nil, nil, nil
		}
		running, key := e.running, st.key
		e.mu.Unlock()
		if lost && running {
			e.log.Info("Cluster stopped on its own; engaging it again", "cluster", name, "cause", context.Cause(ctx).Error())
			e.loop.AddRateLimited(key)
		}
	})
	return nil
}
