// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package namespace

import (
	"context"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Cluster is one namespace of the host, seen as a cluster whose objects live in
// InnerNamespace. Everything not about namespaced objects (config, scheme, REST mapper, HTTP
// client) is the host's.
type Cluster struct {
	// uid is the UID of the namespace the cluster was built for: a namespace created again
	// under the same name is another cluster.
	uid      types.UID
	scope    *scope
	client   *namespacedClient
	cache    *namespacedCache
	api      *reader
	handlers *handlerSet
}

var _ cluster.Cluster = &Cluster{}

func newCluster(p *Provider, ns *corev1.Namespace) *Cluster {
	s := &scope{host: p.host, namespace: ns.Name}
	handlers := newHandlerSet()
	return &Cluster{
		uid:    ns.UID,
		scope:  s,
		client: newClient(s, p.host.GetClient()),
		cache: &namespacedCache{
			reader:   reader{scope: s, host: p.host.GetCache()},
			provider: p,
			hostObj:  p.host.GetCache(),
			handlers: handlers,
		},
		api:      &reader{scope: s, host: p.host.GetAPIReader()},
		handlers: handlers,
	}
}

// HostNamespace returns the namespace of the host this cluster shows.
func (c *Cluster) HostNamespace() string { return c.scope.namespace }

func (c *Cluster) GetHTTPClient() *http.Client { return c.scope.host.GetHTTPClient() }

func (c *Cluster) GetConfig() *rest.Config { return c.scope.host.GetConfig() }

func (c *Cluster) GetCache() cache.Cache { return c.cache }

func (c *Cluster) GetScheme() *runtime.Scheme { return c.scope.host.GetScheme() }

func (c *Cluster) GetClient() client.Client { return c.client }

// GetFieldIndexer indexes the shared host cache, once for all namespace-clusters.
func (c *Cluster) GetFieldIndexer() client.FieldIndexer { return c.cache }

func (c *Cluster) GetRESTMapper() meta.RESTMapper { return c.scope.host.GetRESTMapper() }

func (c *Cluster) GetAPIReader() client.Reader { return c.api }

// GetEventRecorderFor returns a recorder that records Events into the host namespace.
func (c *Cluster) GetEventRecorderFor(name string) record.EventRecorder {
	return &legacyRecorder{scope: c.scope, host: c.scope.host.GetEventRecorderFor(name)}
}

// GetEventRecorder returns a recorder that records Events into the host namespace.
func (c *Cluster) GetEventRecorder(name string) recorder.EventRecorder {
	return &scopedRecorder{scope: c.scope, host: c.scope.host.GetEventRecorder(name)}
}

// Start blocks until ctx ends and then removes the event handlers registered through this
// cluster. The shared host cluster is started by its owner, never here.
func (c *Cluster) Start(ctx context.Context) error {
	<-ctx.Done()
	c.handlers.close()
	return nil
}

// legacyRecorder maps the objects of record.EventRecorder calls to the host namespace.
type legacyRecorder struct {
	scope *scope
	host  record.EventRecorder
}

func (r *legacyRecorder) Event(obj runtime.Object, eventtype, reason, message string) {
	r.host.Event(r.scope.hostObject(obj), eventtype, reason, message)
}

func (r *legacyRecorder) Eventf(obj runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.host.Eventf(r.scope.hostObject(obj), eventtype, reason, messageFmt, args...)
}

func (r *legacyRecorder) AnnotatedEventf(obj runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	r.host.AnnotatedEventf(r.scope.hostObject(obj), annotations, eventtype, reason, messageFmt, args...)
}

// scopedRecorder maps the objects of events.k8s.io recorder calls to the host namespace.
type scopedRecorder struct {
	scope *scope
	host  recorder.EventRecorder
}

func (r *scopedRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.host.Eventf(r.scope.hostObject(regarding), r.scope.hostObject(related), eventtype, reason, action, note, args...)
}

func (r *scopedRecorder) AnnotatedEventf(regarding, related runtime.Object, annotations map[string]string, eventtype, reason, action, note string, args ...any) {
	r.host.AnnotatedEventf(r.scope.hostObject(regarding), r.scope.hostObject(related), annotations, eventtype, reason, action, note, args...)
}
