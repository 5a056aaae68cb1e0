package kcp

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
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
// applied in one place, Options.withDefaults.
type Options struct {
	// Scheme is the scheme of the provider's caches and of every logical cluster's client. It
	// must hold ObjectToWatch and every type controllers read.
	//
	// Defaults to the client-go scheme plus apis.kcp.io/v1alpha1.
	Scheme *runtime.Scheme

	// ObjectToWatch is the type whose objects, listed through each endpoint's /clusters/*
	// wildcard, make their logical clusters (their kcp.io/cluster annotation) part of the
	// fleet. Use another type for virtual workspaces other than the APIExport one.
	//
	// Defaults to &apisv1alpha1.APIBinding{}.
	ObjectToWatch client.Object

	// IsReady reports whether an object of ObjectToWatch makes its logical cluster ready. A
	// logical cluster is engaged while at least one of its objects is ready; it is disengaged
	// when none is, and when its last object is deleted. It must be quick and must not block.
	//
	// Defaults to BindingReady (condition Ready is True) when ObjectToWatch is an APIBinding,
	// and to every object otherwise.
	IsReady func(ctx context.Context, obj client.Object) bool

	// Options are the fields every provider shares, with the defaults documented there. In this
	// provider:
	//   - RESTOptions apply to the config of every endpoint (the config given to New with the
	//     endpoint's URL as host), which its wildcard cache and its logical clusters use; so
	//     does the QPS and Burst default.
	//   - ClusterOptions must be empty: a logical cluster is a view of its endpoint's shared
	//     cache, not a cluster built with cluster.New; Scheme sets the scheme.
	//   - CacheSyncTimeout bounds an endpoint's first sync of ObjectToWatch (an endpoint that
	//     exceeds it is retried with backoff while the others carry on), the wait for each
	//     logical cluster's view before it is engaged, and the wait for the
	//     APIExportEndpointSlice in Start.
	//   - RetryMinDelay and RetryMaxDelay bound the backoff of endpoints that cannot be
	//     watched and of logical clusters that cannot be engaged.
	//   - Policy and SkipAccessCheck are not used: logical clusters have no kubeconfigs of
	//     their own, and an endpoint proves that it answers by syncing its watch.
	//   - EventRecorder records Events on the APIExportEndpointSlice about its endpoints;
	//     by default events.k8s.io/v1 Events through the config given to New, reporting
	//     controller EventSource.
	//   - Logger gets the logical cluster under the key "cluster" and the endpoint URL under
	//     the key "endpoint"; it is named "kcp-provider" by default.
	kit.Options
}

// withDefaults is the only place defaults are applied.
func (o Options) withDefaults() (Options, error) {
	if o.Scheme == nil {
		o.Scheme = runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(o.Scheme); err != nil {
			return o, err
		}
		if err := apisv1alpha1.AddToScheme(o.Scheme); err != nil {
			return o, err
		}
	}
	if o.ObjectToWatch == nil {
		o.ObjectToWatch = &apisv1alpha1.APIBinding{}
	}
	if o.IsReady == nil {
		o.IsReady = func(context.Context, client.Object) bool { return true }
		if _, isBinding := o.ObjectToWatch.(*apisv1alpha1.APIBinding); isBinding {
			o.IsReady = BindingReady
		}
	}
	o.SetDefaults(providerName)
	return o, nil
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
