// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp_test

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"github.com/kcp-dev/sdk/apis/tenancy/initialization"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"

	mcr "mcr.dev/core"
	"mcr.dev/providers/kcp"
)

// Run a controller over every workspace that binds the APIExport "widgets": the config points
// at the workspace of the APIExport, where kcp keeps the APIExportEndpointSlice of the same
// name. The manager starts the provider, which engages each logical cluster whose APIBinding is
// ready.
func Example() {
	cfg := mcr.GetConfigOrDie() // e.g. https://kcp.example.com/clusters/root:widgets-provider
	provider, err := kcp.New(cfg, "widgets", kcp.Options{})
	if err != nil {
		log.Fatal(err)
	}
	mgr, err := mcr.NewManager(cfg, provider, mcr.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// Build controllers on mgr as in mcr's Example (mcr.dev/core), for resources the APIExport
	// claims. A request's ClusterName is the logical cluster's name (kcp.io/cluster).
	if err := mgr.Start(mcr.SetupSignalHandler()); err != nil {
		log.Fatal(err)
	}
}

// Engage every logical cluster that binds the export, ready or not, and find a cluster by its
// workspace path.
func Example_options() {
	provider, err := kcp.New(mcr.GetConfigOrDie(), "widgets", kcp.Options{
		IsReady: func(context.Context, client.Object) bool { return true },
	})
	if err != nil {
		log.Fatal(err)
	}
	// Once the manager runs the provider:
	if cl, err := provider.GetByPath(context.Background(), logicalcluster.NewPath("root:org:team")); err == nil {
		_ = cl.GetClient() // writes to <virtual workspace>/clusters/<logical cluster>
	}
}

// The endpoints of an APIExportEndpointSlice are the URLs of the APIExport's virtual workspace
// on each shard; the provider runs one shared cache per URL.
func ExampleEndpointURLs() {
	slice := &apisv1alpha1.APIExportEndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets"},
		Status: apisv1alpha1.APIExportEndpointSliceStatus{APIExportEndpoints: []apisv1alpha1.APIExportEndpoint{
			{URL: "https://shard-1.kcp.example.com/services/apiexport/root/widgets/"},
			{URL: "https://shard-2.kcp.example.com/services/apiexport/root/widgets"},
		}},
	}
	for _, url := range kcp.EndpointURLs(slice) {
		fmt.Println(url + logicalcluster.Wildcard.RequestPath())
	}
	// Output:
	// https://shard-1.kcp.example.com/services/apiexport/root/widgets/clusters/*
	// https://shard-2.kcp.example.com/services/apiexport/root/widgets/clusters/*
}

// Take the endpoints from an object the operator owns: here a ConfigMap in the workspace the
// config points at, named "<namespace>/<name>", whose key "urls" lists virtual workspace URLs,
// one a line. The provider follows the ConfigMap as it changes.
func Example_endpointObject() {
	urls := func(obj client.Object) ([]string, error) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return nil, fmt.Errorf("%T is not a ConfigMap", obj)
		}
		v, ok := cm.Data["urls"]
		if !ok {
			return nil, fmt.Errorf("ConfigMap %s has no key urls", cm.Name)
		}
		return strings.Fields(v), nil
	}
	cfg := &rest.Config{Host: "https://kcp.example.com/clusters/root:widgets-provider"}
	provider, err := kcp.New(cfg, "platform/widgets-endpoints", kcp.Options{
		EndpointObject: &corev1.ConfigMap{},
		EndpointURLs:   urls,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = provider // hand it to mcr.NewManager

	got, err := urls(&corev1.ConfigMap{Data: map[string]string{
		"urls": "https://shard-1.kcp.example.com/services/apiexport/root/widgets\n",
	}})
	fmt.Println(got, err)
	// Output:
	// [https://shard-1.kcp.example.com/services/apiexport/root/widgets] <nil>
}

// snippet:begin handler
// bindingLog is a Handler that hands each APIBinding it is told about to a channel, never
// blocking: a full channel drops the notification.
type bindingLog chan string

func (l bindingLog) send(event string, obj client.Object) {
	select {
	case l <- event + " " + logicalcluster.From(obj).String() + "/" + obj.GetName():
	default:
	}
}

func (l bindingLog) OnAdd(obj client.Object)       { l.send("added", obj) }
func (l bindingLog) OnUpdate(_, obj client.Object) { l.send("updated", obj) }
func (l bindingLog) OnDelete(obj client.Object)    { l.send("deleted", obj) }

// snippet:end handler

// Be told about every APIBinding of the export as the provider's watch sees it, as kcp-dev's
// handlers.Handler values are; a handler written for kcp-dev's provider is a kcp.Handler as it is.
func ExampleHandler() {
	events := make(bindingLog, 100)
	provider, err := kcp.New(mcr.GetConfigOrDie(), "widgets", kcp.Options{
		Handlers: []kcp.Handler{events},
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = provider // hand it to mcr.NewManager
	go func() {
		for e := range events {
			fmt.Println(e) // e.g. "added 2x8ic9u5lnb0d6ub/widgets"
		}
	}()
}

// Run an initializer controller for the workspaces of the WorkspaceType "tenant" in
// root:platform: each is engaged while it waits for the type's initializer; the controller sets
// it up through the engaged cluster's client, which reads the workspace live, and then removes
// the initializer, which disengages the workspace.
func ExampleNewInitializing() {
	cfg := mcr.GetConfigOrDie() // e.g. https://kcp.example.com/clusters/root:platform
	scheme := runtime.NewScheme()
	sb := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, corev1alpha1.AddToScheme, tenancyv1alpha1.AddToScheme)
	if err := sb.AddToScheme(scheme); err != nil {
		log.Fatal(err)
	}
	// The initializer is named after the logical cluster of the type's workspace.
	host, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		log.Fatal(err)
	}
	wt := &tenancyv1alpha1.WorkspaceType{}
	if err := host.Get(context.Background(), client.ObjectKey{Name: "tenant"}, wt); err != nil {
		log.Fatal(err)
	}
	initializer := initialization.InitializerForType(wt)

	provider, err := kcp.NewInitializing(cfg, "tenant", kcp.Options{})
	if err != nil {
		log.Fatal(err)
	}
	mgr, err := mcr.NewManager(cfg, provider, mcr.Options{Scheme: scheme})
	if err != nil {
		log.Fatal(err)
	}
	err = mcr.NewControllerManagedBy(mgr).
		Named("tenant-initializer").
		For(&corev1alpha1.LogicalCluster{}). // the one type an initializing cluster's cache serves
		Complete(mcr.Func(func(ctx context.Context, req mcr.Request) (mcr.Result, error) {
			cl, err := mgr.GetCluster(ctx, req.ClusterName)
			if err != nil {
				return mcr.Result{}, err
			}
			c := cl.GetClient() // reads and writes <initializing workspaces URL>/clusters/<name>
			lc := &corev1alpha1.LogicalCluster{}
			if err := c.Get(ctx, req.NamespacedName, lc); err != nil {
				return mcr.Result{}, client.IgnoreNotFound(err)
			}
			if !slices.Contains(lc.Status.Initializers, initializer) {
				return mcr.Result{}, nil
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tenant"}}
			if err := c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
				return mcr.Result{}, err
			}
			patch := client.MergeFrom(lc.DeepCopy())
			lc.Status.Initializers = initialization.EnsureInitializerAbsent(initializer, lc.Status.Initializers)
			return mcr.Result{}, c.Status().Patch(ctx, lc, patch)
		}))
	if err != nil {
		log.Fatal(err)
	}
	if err := mgr.Start(mcr.SetupSignalHandler()); err != nil {
		log.Fatal(err)
	}
}

// A WorkspaceType lists the URLs of its initializing and terminating virtual workspaces on
// every shard; NewInitializing watches the initializing ones.
func ExampleInitializingURLs() {
	wt := &tenancyv1alpha1.WorkspaceType{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant"},
		Spec:       tenancyv1alpha1.WorkspaceTypeSpec{Initializer: true},
		Status: tenancyv1alpha1.WorkspaceTypeStatus{VirtualWorkspaces: []tenancyv1alpha1.VirtualWorkspace{
			{URL: "https://shard-1.kcp.example.com/services/initializingworkspaces/1x2y3z:tenant", Type: tenancyv1alpha1.VirtualWorkspaceTypeInitializing},
			{URL: "https://shard-1.kcp.example.com/services/terminatingworkspaces/1x2y3z:tenant", Type: tenancyv1alpha1.VirtualWorkspaceTypeTerminating},
		}},
	}
	urls, err := kcp.InitializingURLs(wt)
	fmt.Println(urls, err)
	// Output:
	// [https://shard-1.kcp.example.com/services/initializingworkspaces/1x2y3z:tenant] <nil>
}
