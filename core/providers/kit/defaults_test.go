// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"mcr.dev/core/clusters"
	"mcr.dev/core/envtest"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/core/restmapper"
)

// widgetGV is the group of the Widget CRD, which only the manager-level scheme of these tests
// knows.
var widgetGV = schema.GroupVersion{Group: "defaults.mcr.dev", Version: "v1"}

// Widget is a custom resource served by a CRD on the member.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec `json:"spec,omitempty"`
}

type WidgetSpec struct {
	Size int `json:"size,omitempty"`
}

func (w *Widget) DeepCopyObject() runtime.Object {
	c := *w
	w.DeepCopyInto(&c.ObjectMeta)
	return &c
}

type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

func (l *WidgetList) DeepCopyObject() runtime.Object {
	c := *l
	l.DeepCopyInto(&c.ListMeta)
	c.Items = make([]Widget, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Widget)
	}
	return &c
}

// widgetScheme returns client-go's types and Widget.
func widgetScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	s.AddKnownTypes(widgetGV, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, widgetGV)
	return s
}

// installWidgets installs the Widget CRD on the member and creates the Widget ns/name once
// the CRD is served. It goes through unstructured objects, so that it needs no scheme.
func installWidgets(t *testing.T, cfg *rest.Config, ns, name string) {
	t.Helper()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "widgets." + widgetGV.Group},
		"spec": map[string]any{
			"group": widgetGV.Group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{
				"name": widgetGV.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
	if err := c.Create(t.Context(), crd); err != nil {
		t.Fatalf("creating the Widget CRD: %v", err)
	}
	if err := c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": widgetGV.String(), "kind": "Widget",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec":     map[string]any{"size": int64(3)},
	}}
	// The CRD is served a moment after it is created.
	providertest.Eventually(t, time.Minute, "the Widget CRD served", func() error {
		return c.Create(t.Context(), widget.DeepCopy())
	})
}

// runManager starts a manager on host with the provider and mcOpts until the test ends.
func runManager(t *testing.T, host *rest.Config, p *memberProvider, opts mcmanager.Options, mcOpts ...mcmanager.Option) mcmanager.Manager {
	t.Helper()
	opts.Logger = logr.Discard()
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	opts.HealthProbeBindAddress = "0"
	mgr, err := mcmanager.New(host, p, opts, mcOpts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return mgr
}

// engaged waits for the provider to engage the member and returns its cluster.
func engaged(t *testing.T, p *memberProvider, name string) cluster.Cluster {
	t.Helper()
	var cl cluster.Cluster
	providertest.Eventually(t, 2*time.Minute, name+" engaged", func() error {
		var err error
		cl, err = p.Get(t.Context(), multicluster.ClusterName(name))
		return err
	})
	return cl
}

// TestClusterDefaultsAreInherited runs a provider on the kit under a manager whose cluster
// defaults (manager.WithClusterDefaults) carry the only scheme that knows Widget, a CRD type
// the member serves: the member's cluster reads Widgets with the defaults and refuses them
// clearly without; the provider's own options win over the defaults; the local cluster inherits
// what its own options leave unset.
func TestClusterDefaultsAreInherited(t *testing.T) {
	fleet := envtest.StartForTest(t, "host", "member")
	host, member := fleet.Member("host").Config(), fleet.Member("member").Config()
	// As a config read from a kubeconfig: fleet configs come with a QPS and Burst of their own.
	member.QPS, member.Burst = 0, 0
	installWidgets(t, member, "widgets", "w1")
	widgets := widgetScheme(t)
	mappers := restmapper.NewPool(restmapper.Options{})
	defaults := clusters.Defaults{
		Scheme: widgets,
		Cache:  cache.Options{DefaultNamespaces: map[string]cache.Config{"widgets": {}}},
		QPS:    7, Burst: 9,
		RESTMappers: mappers,
	}
	key := types.NamespacedName{Namespace: "widgets", Name: "w1"}

	t.Run("inherited", func(t *testing.T) {
		p := newMemberProvider(t, kit.Options{})
		mgr := runManager(t, host, p, mcmanager.Options{}, mcmanager.WithClusterDefaults(defaults))
		p.set("member", member)
		cl := engaged(t, p, "member")

		if cl.GetScheme() != widgets {
			t.Error("the member's cluster does not use the manager-level scheme")
		}
		var w Widget
		if err := cl.GetClient().Get(t.Context(), key, &w); err != nil {
			t.Fatalf("reading the Widget through the member's cache: %v", err)
		}
		if w.Spec.Size != 3 {
			t.Errorf("Widget read with size %d, want 3", w.Spec.Size)
		}
		if got := cl.GetConfig(); got.QPS != 7 || got.Burst != 9 {
			t.Errorf("member QPS/Burst = %v/%d, want the defaults 7/9", got.QPS, got.Burst)
		}
		// The cache inherited its namespaces: it holds "widgets" only.
		err := cl.GetCache().List(t.Context(), &corev1.ConfigMapList{}, client.InNamespace("default"))
		if err == nil || !strings.Contains(err.Error(), "unknown namespace") {
			t.Errorf("listing outside the default cache namespaces: got %v, want an unknown namespace error", err)
		}
		if mgr.GetLocalManager().GetScheme() != widgets {
			t.Error("the local cluster does not use the manager-level scheme its Options leave unset")
		}
		// The member's and the local cluster's REST mappers come from the shared pool: one per
		// endpoint, the host and the member.
		if got := mappers.Endpoints(); got != 2 {
			t.Errorf("endpoints with a shared REST mapper: %d, want 2 (the local cluster and the member)", got)
		}
	})

	t.Run("without defaults", func(t *testing.T) {
		p := newMemberProvider(t, kit.Options{})
		runManager(t, host, p, mcmanager.Options{Scheme: widgets})
		p.set("member", member)
		cl := engaged(t, p, "member")

		// The manager's own scheme knows Widget, but the provider was never told: the member
		// refuses the type, and the error says which type and which scheme.
		err := cl.GetClient().Get(t.Context(), key, &Widget{})
		if !runtime.IsNotRegisteredError(err) {
			t.Fatalf("reading a Widget without the defaults: got %v, want a not-registered error", err)
		}
		if !strings.Contains(err.Error(), "no kind is registered for the type") || !strings.Contains(err.Error(), "Widget") {
			t.Errorf("the error does not say clearly what is missing: %v", err)
		}
		if got := cl.GetConfig(); got.QPS != kit.DefaultQPS || got.Burst != kit.DefaultBurst {
			t.Errorf("member QPS/Burst = %v/%d, want the kit's %d/%d", got.QPS, got.Burst, kit.DefaultQPS, kit.DefaultBurst)
		}
	})

	t.Run("provider overrides", func(t *testing.T) {
		own := widgetScheme(t)
		p := newMemberProvider(t, kit.Options{
			ClusterOptions: []cluster.Option{func(o *cluster.Options) { o.Scheme = own }},
			RESTOptions: []func(*rest.Config) error{func(c *rest.Config) error {
				c.QPS, c.Burst = 3, 4
				return nil
			}},
		})
		local := runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(local); err != nil {
			t.Fatal(err)
		}
		mgr := runManager(t, host, p, mcmanager.Options{Scheme: local}, mcmanager.WithClusterDefaults(defaults))
		p.set("member", member)
		cl := engaged(t, p, "member")

		if cl.GetScheme() != own {
			t.Error("the provider's own scheme does not win over the manager's default")
		}
		if got := cl.GetConfig(); got.QPS != 3 || got.Burst != 4 {
			t.Errorf("member QPS/Burst = %v/%d, want the provider's 3/4", got.QPS, got.Burst)
		}
		// The provider set the scheme only: the cache options are still the defaults.
		err := cl.GetCache().List(t.Context(), &corev1.ConfigMapList{}, client.InNamespace("default"))
		if err == nil || !strings.Contains(err.Error(), "unknown namespace") {
			t.Errorf("the provider's scheme option dropped the default cache namespaces: list got %v", err)
		}
		if err := cl.GetClient().Get(t.Context(), key, &Widget{}); err != nil {
			t.Errorf("reading the Widget with the provider's scheme: %v", err)
		}
		if mgr.GetLocalManager().GetScheme() != local {
			t.Error("the local manager's own Options.Scheme does not win over the default")
		}
	})
}

// TestClusterDefaultsPrecedence checks Options.Inherit without clusters: defaults before the
// provider's options, QPS and Burst only for configs that set neither.
func TestClusterDefaultsPrecedence(t *testing.T) {
	d := clusters.Defaults{
		Scheme: runtime.NewScheme(),
		Cache:  cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {}}},
		QPS:    7, Burst: 9,
	}
	providerScheme := runtime.NewScheme()
	o := kit.Options{ClusterOptions: []cluster.Option{func(o *cluster.Options) {
		o.Scheme = providerScheme
		o.Cache.DefaultNamespaces["b"] = cache.Config{}
	}}}.Inherit(d)
	var co cluster.Options
	for _, opt := range o.ClusterOptions {
		opt(&co)
	}
	if co.Scheme != providerScheme {
		t.Error("the provider's scheme does not win")
	}
	if _, ok := co.Cache.DefaultNamespaces["a"]; !ok {
		t.Error("the default cache namespaces are lost")
	}
	if _, ok := d.Cache.DefaultNamespaces["b"]; ok {
		t.Error("a provider option changed the manager's defaults, shared by every member")
	}

	for _, tc := range []struct {
		qps   float32
		burst int
		want  string
	}{
		{0, 0, "7/9"},   // neither set: the defaults
		{50, 0, "50/0"}, // the member's own
	} {
		cfg, err := o.RESTConfig(&rest.Config{Host: "https://example.invalid", QPS: tc.qps, Burst: tc.burst})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%v/%d", cfg.QPS, cfg.Burst); got != tc.want {
			t.Errorf("config with %v/%d: got %s, want %s", tc.qps, tc.burst, got, tc.want)
		}
	}
	schemeOnly := kit.Options{}.Inherit(clusters.Defaults{Scheme: d.Scheme})
	cfg, err := schemeOnly.RESTConfig(&rest.Config{Host: "https://example.invalid"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QPS != kit.DefaultQPS || cfg.Burst != kit.DefaultBurst {
		t.Errorf("defaults without QPS/Burst: got %v/%d, want the kit's", cfg.QPS, cfg.Burst)
	}
}
