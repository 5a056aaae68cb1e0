// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	mccontext "mcr.dev/core/context"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/redact"
)

// Webhook serves an admission handler for every cluster of the fleet and hands each request to
// the handler with its cluster in the context (mccontext.ClusterFrom, mccontext.ClusterObjectFrom).
//
// It is an http.Handler for a webhook server and a multicluster.Aware: the clusters it is
// engaged with are the clusters it serves, from Engage until the engage context ends. Create it
// with New, or through the builder (ManagedBy), which also registers it with a manager.
type Webhook struct {
	opts    Options
	handler admission.Handler
	http    http.Handler

	mu       sync.RWMutex
	clusters map[multicluster.ClusterName]*engagement
}

// engagement is one Engage call: the cluster is forgotten when its context ends, unless a later
// engagement of the same name replaced it, even with the same cluster object.
type engagement struct{ cluster cluster.Cluster }

var _ multicluster.Aware = &Webhook{}

// New returns a webhook that serves handler as opts say, engaged with no cluster yet.
func New(handler admission.Handler, opts Options) (*Webhook, error) {
	if handler == nil {
		return nil, errors.New("webhook: handler is nil")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	w := &Webhook{opts: opts, handler: handler, clusters: map[multicluster.ClusterName]*engagement{}}
	hook := &admission.Webhook{
		Handler:         admission.HandlerFunc(w.route),
		RecoverPanic:    opts.RecoverPanic,
		WithContextFunc: withRequestPath,
	}
	// StandaloneWebhook only sets the logger here; a manager's webhook server adds the metrics.
	if w.http, err = admission.StandaloneWebhook(hook, admission.StandaloneOptions{Logger: opts.Logger}); err != nil {
		return nil, fmt.Errorf("webhook %s: %w", opts.Path, err)
	}
	return w, nil
}

// Path is the path the webhook is served at (Options.Path); with per-cluster paths, the
// clusters' paths are under it.
func (w *Webhook) Path() string { return w.opts.Path }

// PerClusterPaths reports whether each cluster calls its own path (no ClusterResolver).
func (w *Webhook) PerClusterPaths() bool { return w.opts.ClusterResolver == nil }

// PathFor is the path cluster name must call: ClusterPath(Path(), name) with per-cluster
// paths, Path() with a ClusterResolver.
func (w *Webhook) PathFor(name multicluster.ClusterName) string {
	if !w.PerClusterPaths() {
		return w.opts.Path
	}
	return ClusterPath(w.opts.Path, name)
}

// Clusters returns the names of the clusters the webhook is engaged with, sorted.
func (w *Webhook) Clusters() []multicluster.ClusterName {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return slices.Sorted(maps.Keys(w.clusters))
}

// Engage serves the cluster's requests until ctx ends. Engaging a name again replaces its
// cluster.
func (w *Webhook) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	if cl == nil {
		return fmt.Errorf("webhook %s: cannot engage cluster %q: cluster is nil", w.opts.Path, name)
	}
	e := &engagement{cluster: cl}
	w.mu.Lock()
	w.clusters[name] = e
	w.mu.Unlock()
	log := w.opts.Logger.WithValues("cluster", string(name))
	log.V(1).Info("Serving cluster", "clusterPath", w.PathFor(name))
	// Runs at once when ctx has ended already.
	context.AfterFunc(ctx, func() {
		w.mu.Lock()
		current := w.clusters[name] == e
		if current {
			delete(w.clusters, name)
		}
		w.mu.Unlock()
		if current {
			log.V(1).Info("Stopped serving cluster")
		}
	})
	return nil
}

// ServeHTTP answers one AdmissionReview.
func (w *Webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) { w.http.ServeHTTP(rw, r) }

type requestPathKey struct{}

// withRequestPath keeps the request's path for route, which sees only the admission request.
func withRequestPath(ctx context.Context, r *http.Request) context.Context {
	return context.WithValue(ctx, requestPathKey{}, r.URL.Path)
}

// route finds the request's cluster and hands the request to the handler, with the cluster in
// the context and on the logger.
func (w *Webhook) route(ctx context.Context, req admission.Request) admission.Response {
	name, err := w.clusterOf(ctx, req)
	if err != nil {
		return w.unknown(ctx, fmt.Sprintf("cannot tell the cluster of the request: %v", err))
	}
	log := ctrllog.FromContext(ctx).WithValues("cluster", string(name))
	ctx = ctrllog.IntoContext(ctx, log)
	cl, err := w.cluster(ctx, name)
	if err != nil {
		return w.unknown(ctx, fmt.Sprintf("cluster %q is not served by webhook %s: %v", name, w.opts.Path, err))
	}
	ctx = mccontext.WithClusterObject(mccontext.WithCluster(ctx, name), cl)
	return redactResponse(w.handler.Handle(ctx, req), redact.Secrets(cl.GetConfig()))
}

// redactResponse removes credentials from what the API server shows the client: the message
// and the warnings. A handler's error may quote a member's URL and credentials (errors of the
// member's client do), and controller-runtime's typed handlers answer with the error's text.
func redactResponse(resp admission.Response, secrets []string) admission.Response {
	if resp.Result != nil && resp.Result.Message != "" {
		result := *resp.Result
		result.Message = redact.Text(result.Message, secrets...)
		resp.Result = &result
	}
	if len(resp.Warnings) > 0 {
		// A copy: the handler may answer with a slice it keeps.
		warnings := make([]string, len(resp.Warnings))
		for i, warning := range resp.Warnings {
			warnings[i] = redact.Text(warning, secrets...)
		}
		resp.Warnings = warnings
	}
	return resp
}

// clusterOf tells the request's cluster: from its path, or through the ClusterResolver.
func (w *Webhook) clusterOf(ctx context.Context, req admission.Request) (multicluster.ClusterName, error) {
	if w.opts.ClusterResolver != nil {
		return w.opts.ClusterResolver(ctx, req)
	}
	p, ok := ctx.Value(requestPathKey{}).(string)
	if !ok {
		return "", errors.New("the request did not come over HTTP: per-cluster paths need the request path")
	}
	if p == w.opts.Path {
		return "", nil
	}
	segment, ok := strings.CutPrefix(p, w.opts.Path+"/")
	if !ok || strings.Contains(segment, "/") {
		return "", fmt.Errorf("path %q is not a cluster path of %s", p, w.opts.Path)
	}
	return UnescapeClusterName(segment)
}

// errNotEngaged is why an unknown cluster is not served when there is no Lookup.
var errNotEngaged = errors.New("not engaged")

// cluster returns the engaged cluster of that name, or the one Lookup finds.
func (w *Webhook) cluster(ctx context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	w.mu.RLock()
	e, ok := w.clusters[name]
	w.mu.RUnlock()
	if ok {
		return e.cluster, nil
	}
	if w.opts.Lookup == nil || name == "" {
		return nil, errNotEngaged
	}
	cl, err := w.opts.Lookup(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("not engaged, and looking it up: %w", err)
	}
	if cl == nil {
		return nil, errNotEngaged
	}
	return cl, nil
}

// unknown answers a request the webhook cannot route, as Options.UnknownCluster says.
func (w *Webhook) unknown(ctx context.Context, reason string) admission.Response {
	reason = redact.Text(reason)
	log := ctrllog.FromContext(ctx)
	if w.opts.UnknownCluster == AllowUnknownCluster {
		log.V(1).Info("Allowing a request without checks", "reason", reason)
		return admission.Allowed("").WithWarnings(reason + "; allowed without checks")
	}
	log.V(1).Info("Denying a request", "reason", reason)
	return admission.Denied(reason)
}
