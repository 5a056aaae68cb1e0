// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"

	"mcr.dev/core/providers/kit"
)

// providerName names the provider's logger, queue and Event reporting controller.
const providerName = "kcp-provider"

// Defaults of Options.
const (
	DefaultRetryMinDelay = kit.DefaultRetryMinDelay
	DefaultRetryMaxDelay = kit.DefaultRetryMaxDelay
	DefaultResyncPeriod  = kit.DefaultResyncPeriod
)

// Options configures a Provider. The zero value of every field selects its default; defaults are
// applied in one place, Options.withDefaults. Some defaults depend on the constructor: New serves
// an APIExport's virtual workspace, NewInitializing the initializing workspaces of a
// WorkspaceType.
type Options struct {
	// Scheme is the scheme of the provider's caches and of every logical cluster's client. It
	// must hold EndpointObject, ObjectToWatch and every type controllers read.
	//
	// Defaults to the client-go scheme plus apis.kcp.io/v1alpha1, core.kcp.io/v1alpha1 and
	// tenancy.kcp.io/v1alpha1.
	Scheme *runtime.Scheme

	// EndpointObject is the type of the object that lists the endpoints, the virtual
	// workspace URLs the provider watches: the object of that type named as given to the
	// constructor, in the workspace its config points at (a namespaced type is named
	// "<namespace>/<name>"). The provider follows it as it changes; when it is deleted every
	// endpoint stops.
	//
	// Defaults to &apisv1alpha1.APIExportEndpointSlice{} for New and to
	// &tenancyv1alpha1.WorkspaceType{} for NewInitializing.
	EndpointObject client.Object

	// EndpointURLs returns the endpoint URLs an EndpointObject lists; the provider removes
	// trailing slashes, empty URLs and duplicates. An error is a problem of the object
	// (reason InvalidEndpointObject): the provider keeps the endpoints it had until the object
	// changes. It must be quick and must not block.
	//
	// Defaults, when EndpointObject is an APIExportEndpointSlice, to its status URLs (see the
	// function EndpointURLs) and, for NewInitializing, to InitializingURLs. Required for any
	// other EndpointObject.
	EndpointURLs func(obj client.Object) ([]string, error)

	// ObjectToWatch is the type whose objects, listed through each endpoint's /clusters/*
	// wildcard, make their logical clusters (their kcp.io/cluster annotation) part of the
	// fleet. Use another type for virtual workspaces other than the APIExport one.
	//
	// Defaults to &apisv1alpha1.APIBinding{} for New and to &corev1alpha1.LogicalCluster{} for
	// NewInitializing.
	ObjectToWatch client.Object

	// IsReady reports whether an object of ObjectToWatch makes its logical cluster ready. A
	// logical cluster is engaged while at least one of its objects is ready; it is disengaged
	// when none is, and when its last object is deleted. It must be quick and must not block.
	//
	// Defaults to BindingReady (condition Ready is True) when ObjectToWatch is an APIBinding;
	// for NewInitializing, when ObjectToWatch is a LogicalCluster, to "its status.initializers
	// lists the initializer of the WorkspaceType" (initialization.InitializerForType, learned
	// from the WorkspaceType each time EndpointURLs reads it); and to every object otherwise.
	IsReady func(ctx context.Context, obj client.Object) bool

	// Handlers are told about every object of ObjectToWatch that the endpoints list, as
	// kcp-dev's multicluster-provider tells its handlers.Handler values (which are Handlers as
	// they are): OnAdd, OnUpdate and OnDelete, in the order each endpoint's watch sees them.
	// See Handler for when they run; they must not block.
	//
	// Defaults to none.
	Handlers []Handler

	// Options are the fields every provider shares, with the defaults documented there. In this
	// provider:
	//   - RESTOptions apply to the config of every endpoint (the config given to New with the
	//     endpoint's URL as host), which its wildcard cache and its logical clusters use; so
	//     does the QPS and Burst default.
	//   - ClusterOptions must be empty: a logical cluster is a view of its endpoint's shared
	//     cache, not a cluster built with cluster.New; Scheme sets the scheme.
	//   - CacheSyncTimeout bounds an endpoint's first sync of ObjectToWatch (an endpoint that
	//     exceeds it is retried with backoff while the others carry on), the wait for each
	//     logical cluster's view before it is engaged, and the wait for the EndpointObject in
	//     Start.
	//   - RetryMinDelay and RetryMaxDelay bound the backoff of endpoints that cannot be
	//     watched and of logical clusters that cannot be engaged.
	//   - Policy and SkipAccessCheck are not used: logical clusters have no kubeconfigs of
	//     their own, and an endpoint proves that it answers by syncing its watch.
	//   - EventRecorder records Events on the EndpointObject about its endpoints; by default
	//     events.k8s.io/v1 Events through the config given to New, reporting controller
	//     EventSource.
	//   - Logger gets the logical cluster under the key "cluster" and the endpoint URL under
	//     the key "endpoint"; it is named "kcp-provider" by default.
	kit.Options
}

// virtualWorkspace is the kind of virtual workspace a constructor serves; it selects the
// defaults of Options.
type virtualWorkspace int

const (
	// apiExportWorkspace: New, the virtual workspace of an APIExport, found through its
	// APIExportEndpointSlice.
	apiExportWorkspace virtualWorkspace = iota
	// initializingWorkspaces: NewInitializing, the initializing workspaces of a WorkspaceType.
	initializingWorkspaces
)

// withDefaults is the only place defaults are applied.
func (o Options) withDefaults(vw virtualWorkspace) (Options, error) {
	if o.Scheme == nil {
		o.Scheme = runtime.NewScheme()
		sb := runtime.NewSchemeBuilder(
			clientgoscheme.AddToScheme, apisv1alpha1.AddToScheme, corev1alpha1.AddToScheme, tenancyv1alpha1.AddToScheme,
		)
		if err := sb.AddToScheme(o.Scheme); err != nil {
			return o, err
		}
	}
	if o.EndpointObject == nil {
		o.EndpointObject = &apisv1alpha1.APIExportEndpointSlice{}
		if vw == initializingWorkspaces {
			o.EndpointObject = &tenancyv1alpha1.WorkspaceType{}
		}
	}
	if o.EndpointURLs == nil {
		switch o.EndpointObject.(type) {
		case *apisv1alpha1.APIExportEndpointSlice:
			o.EndpointURLs = sliceURLs
		case *tenancyv1alpha1.WorkspaceType:
			if vw == initializingWorkspaces {
				o.EndpointURLs = InitializingURLs
			}
		}
		if o.EndpointURLs == nil {
			return o, fmt.Errorf("Options.EndpointURLs is required with an Options.EndpointObject of type %T", o.EndpointObject)
		}
	}
	if o.ObjectToWatch == nil {
		o.ObjectToWatch = &apisv1alpha1.APIBinding{}
		if vw == initializingWorkspaces {
			o.ObjectToWatch = &corev1alpha1.LogicalCluster{}
		}
	}
	if o.IsReady == nil {
		o.IsReady = func(context.Context, client.Object) bool { return true }
		switch o.ObjectToWatch.(type) {
		case *apisv1alpha1.APIBinding:
			o.IsReady = BindingReady
		case *corev1alpha1.LogicalCluster:
			if vw == initializingWorkspaces {
				// The initializer is learned from the WorkspaceType as its URLs are read.
				t := &typeInitializer{}
				urls := o.EndpointURLs
				o.EndpointURLs = func(obj client.Object) ([]string, error) {
					t.learn(obj)
					return urls(obj)
				}
				o.IsReady = t.listed
			}
		}
	}
	o.SetDefaults(providerName)
	return o, nil
}

// sliceURLs is the default of Options.EndpointURLs for an APIExportEndpointSlice.
func sliceURLs(obj client.Object) ([]string, error) {
	slice, ok := obj.(*apisv1alpha1.APIExportEndpointSlice)
	if !ok {
		return nil, fmt.Errorf("%T is not an APIExportEndpointSlice", obj)
	}
	return EndpointURLs(slice), nil
}

// BindingReady reports whether obj is an APIBinding whose condition Ready is True: the default
// of Options.IsReady.
func BindingReady(_ context.Context, obj client.Object) bool {
	b, ok := obj.(*apisv1alpha1.APIBinding)
	if !ok {
		return false
	}
	for _, c := range b.Status.Conditions {
		if c.Type == conditionsv1alpha1.ReadyCondition {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
