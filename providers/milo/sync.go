package milo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/providers/reconcileloop"
)

// state returns the remembered state of a project, creating it.
func (p *Provider) state(project string) *projectState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.states[project]
	if !ok {
		st = &projectState{}
		p.states[project] = st
	}
	return st
}

// isEngaged reports whether the instance engaged for st is still the engaged one (it is not
// when its cache stopped on its own, or it was removed).
func (p *Provider) isEngaged(ctx context.Context, project string, st *projectState) bool {
	if st.engaged == nil {
		return false
	}
	cl, err := p.GetTyped(ctx, ClusterName(project))
	return err == nil && cl == st.engaged
}

// sync brings the engagement of one project in line with its object (Project or
// ProjectControlPlane, after the Mode).
func (p *Provider) sync(ctx context.Context, project string) reconcileloop.Result {
	name := ClusterName(project)
	log := p.log.WithValues("cluster", name)
	kind := p.opts.Mode.kind()

	obj := p.opts.Mode.newObject()
	if err := p.host.GetCache().Get(ctx, client.ObjectKey{Name: project}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			p.forget(project, log, "the "+kind+" is gone")
			return reconcileloop.Result{}
		}
		log.Error(err, "Reading the "+kind+" from the host cache")
		return reconcileloop.Result{Retry: true}
	}
	st := p.state(project)
	if !p.selects(obj) {
		p.disengage(ctx, project, st, obj, log, "the "+kind+" is not selected by the provider's options")
		return reconcileloop.Result{}
	}
	if !p.opts.IsReady(ctx, obj) {
		return p.unready(ctx, project, st, obj, log)
	}

	engaged := p.isEngaged(ctx, project, st)
	if !st.unreadySince.IsZero() {
		st.unreadySince = time.Time{}
		if engaged {
			log.Info("Project is ready again within the grace period; its cluster stayed engaged")
		}
	}
	if engaged {
		p.problems.Resolve(&st.problem, log)
		return reconcileloop.Result{}
	}

	cfg, err := p.restConfig(project)
	if err != nil {
		p.problems.Report(&st.problem, log, obj, nil, ReasonInvalidConfig, ReasonInvalidConfig, err)
		return reconcileloop.Result{}
	}
	cl, err := cluster.New(cfg, p.opts.ClusterOptions...)
	if err != nil {
		p.problems.Report(&st.problem, log, obj, nil, ReasonInvalidConfig, ReasonInvalidConfig, fmt.Errorf("creating the cluster: %w", err))
		return reconcileloop.Result{}
	}

	checkCtx, cancel := context.WithTimeout(ctx, p.opts.CacheSyncTimeout)
	err = checkAccess(checkCtx, cl)
	cancel()
	if err != nil {
		cl.GetHTTPClient().CloseIdleConnections()
		if ctx.Err() != nil {
			return reconcileloop.Result{}
		}
		reason := ReasonClusterUnreachable
		if errors.Is(err, errUnauthorized) {
			reason = ReasonUnauthorized
		}
		p.problems.Report(&st.problem, log, obj, nil, reason, reason, err)
		return reconcileloop.Result{Retry: true}
	}

	// The engaged cluster lives as long as the provider, never as long as this sync.
	if err := p.AddOrReplace(ctx, name, cl, p.aware); err != nil {
		if ctx.Err() != nil {
			return reconcileloop.Result{}
		}
		reason := ReasonEngageFailed
		if errors.Is(err, clusters.ErrCacheSyncTimeout) {
			reason = ReasonClusterUnreachable
		}
		p.problems.Report(&st.problem, log, obj, nil, reason, reason, err)
		return reconcileloop.Result{Retry: true}
	}
	current, err := p.GetTyped(ctx, name)
	if err != nil {
		// Engaged and gone again at once (its cache stopped): the next sync starts over.
		return reconcileloop.Result{Retry: true}
	}
	st.engaged = current
	p.problems.Resolve(&st.problem, log)
	log.Info("Engaged cluster", "host", cfg.Host)
	p.events.Record(obj, nil, corev1.EventTypeNormal, ReasonClusterEngaged, "Project control plane engaged at "+cfg.Host)
	return reconcileloop.Result{}
}

// unready handles a selected object that is not ready: an engaged project keeps its cluster for
// the grace period and is disengaged when it is still unready at its end; a project that is
// not engaged stays so.
func (p *Provider) unready(ctx context.Context, project string, st *projectState, obj client.Object, log logr.Logger) reconcileloop.Result {
	kind := p.opts.Mode.kind()
	if !p.isEngaged(ctx, project, st) {
		st.unreadySince = time.Time{}
		p.disengage(ctx, project, st, obj, log, "the "+kind+" is not ready")
		return reconcileloop.Result{}
	}
	grace := p.opts.UnreadyGracePeriod
	if grace < 0 {
		st.unreadySince = time.Time{}
		p.disengage(ctx, project, st, obj, log, "the "+kind+" is not ready")
		return reconcileloop.Result{}
	}
	now := time.Now()
	if st.unreadySince.IsZero() {
		st.unreadySince = now
		log.Info("Project is not ready; its cluster stays engaged for the grace period", "gracePeriod", grace)
		p.events.Record(obj, nil, corev1.EventTypeNormal, ReasonProjectUnready,
			fmt.Sprintf("The %s is not ready; its control plane stays engaged for %s and is disengaged if it is not ready by then", kind, grace))
	}
	if left := grace - now.Sub(st.unreadySince); left > 0 {
		return reconcileloop.Result{After: left}
	}
	st.unreadySince = time.Time{}
	p.disengage(ctx, project, st, obj, log, fmt.Sprintf("the %s has not been ready for the grace period (%s)", kind, grace))
	return reconcileloop.Result{}
}

// disengage removes the cluster of a project whose object exists but must not be engaged. obj
// gets a Normal Event if a cluster was engaged.
func (p *Provider) disengage(ctx context.Context, project string, st *projectState, obj client.Object, log logr.Logger, why string) {
	p.problems.Resolve(&st.problem, log)
	wasEngaged := p.isEngaged(ctx, project, st)
	if st.engaged != nil {
		p.Remove(ClusterName(project))
		st.engaged = nil
	}
	if !wasEngaged {
		log.V(1).Info("Cluster not engaged: " + why)
		return
	}
	log.Info("Disengaged cluster: " + why)
	p.events.Record(obj, nil, corev1.EventTypeNormal, ReasonClusterDisengaged, "Project control plane disengaged: "+why)
}

// forget disengages the cluster of a project whose object is gone and drops what the provider
// knew.
func (p *Provider) forget(project string, log logr.Logger, why string) {
	p.mu.Lock()
	st, ok := p.states[project]
	delete(p.states, project)
	p.mu.Unlock()
	if !ok {
		return
	}
	p.problems.Resolve(&st.problem, log)
	if st.engaged != nil {
		p.Remove(ClusterName(project))
		log.Info("Disengaged cluster: " + why)
	}
}
