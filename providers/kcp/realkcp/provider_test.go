// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package realkcp_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"

	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mcr "mcr.dev/core"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kcp"
)

// TestFollowsBindings runs the provider on an APIExport that nothing binds yet, so that its
// APIExportEndpointSlice lists no virtual workspace, and checks that: the consumer workspaces
// that bind it later are engaged under their logical cluster names, through the real virtual
// workspace URL the slice comes to list; each engaged cluster reads and writes its own workspace
// only, and GetByPath finds it by its workspace path; deleting a binding, and deleting a
// workspace, disengages the consumer and no other; and a workspace that binds once every other
// binding is gone (the slice lost its endpoint) is engaged again.
func TestFollowsBindings(t *testing.T) {
	provider := newExport(t)
	logs := testLogs(t)
	p, err := kcp.New(server.WorkspaceConfig(provider.Path), exportName, providerOptions(logs))
	if err != nil {
		t.Fatal(err)
	}
	run := providertest.Start(t, p, waitTimeout)
	rec := run.Recorder

	consumers := newConsumers(t, provider, 2)
	one, two := consumers[0], consumers[1]
	urls, err := server.WaitEndpointURLs(t.Context(), provider.Path, exportName)
	if err != nil {
		t.Fatal(err)
	}
	if len(urls) != 1 || !strings.HasPrefix(urls[0], server.URL()+"/services/apiexport/") {
		t.Fatalf("the APIExportEndpointSlice lists %q, want one URL of kcp's APIExport virtual workspace", urls)
	}
	engaged := map[multicluster.ClusterName]*providertest.Engagement{}
	for _, c := range consumers {
		e := rec.WaitEngaged(t, p, c.name(), waitTimeout)
		engaged[c.name()] = e
		want := strings.TrimRight(urls[0], "/") + "/clusters/" + c.Cluster.String()
		if got := e.Cluster.GetConfig().Host; got != want {
			t.Errorf("cluster %s talks to %s, want %s", c.name(), got, want)
		}
		// kcp annotates every APIBinding with its workspace path (kcp.io/path).
		if cl, err := p.GetByPath(t.Context(), c.Path); err != nil {
			t.Errorf("GetByPath(%s): %v", c.Path, err)
		} else if got := cl.GetConfig().Host; got != want {
			t.Errorf("GetByPath(%s) talks to %s, want %s", c.Path, got, want)
		}
	}

	// Each engaged cluster sees its own workspace's Widgets, through the shared cache and live.
	for _, c := range consumers {
		c.createWidget(t, "w-"+c.Cluster.String())
	}
	for _, c := range consumers {
		cl := engaged[c.name()].Cluster
		want := []string{"w-" + c.Cluster.String()}
		eventually(t, "the cache of "+string(c.name())+" lists its own Widget only", func() error {
			return expectWidgets(t.Context(), cl.GetClient(), want)
		})
		if err := expectWidgets(t.Context(), cl.GetAPIReader(), want); err != nil {
			t.Errorf("live list through %s: %v", c.name(), err)
		}
	}
	// A write through an engaged cluster lands in its workspace.
	written := newWidget("written-through-provider")
	if err := engaged[one.name()].Cluster.GetClient().Create(t.Context(), written); err != nil {
		t.Fatalf("creating a Widget through %s: %v", one.name(), err)
	}
	if err := one.adminClient(t).Get(t.Context(), client.ObjectKeyFromObject(written), newWidget(written.GetName())); err != nil {
		t.Errorf("the Widget written through %s is not in workspace %s: %v", one.name(), one.Path, err)
	}

	// Deleting the binding disengages the consumer, and only it.
	if err := server.DeleteBinding(t.Context(), one.Path, one.binding); err != nil {
		t.Fatal(err)
	}
	rec.WaitDisengaged(t, p, one.name(), engaged[one.name()], waitTimeout)
	if !engaged[two.name()].Alive() {
		t.Fatalf("%s was disengaged with %s", two.name(), one.name())
	}

	// Deleting the workspace disengages its consumer.
	if err := server.DeleteWorkspace(t.Context(), two.Workspace); err != nil {
		t.Fatal(err)
	}
	rec.WaitDisengaged(t, p, two.name(), engaged[two.name()], waitTimeout)

	// Nothing binds the export now; a workspace that binds it is engaged again.
	three := newConsumers(t, provider, 1)[0]
	e := rec.WaitEngaged(t, p, three.name(), waitTimeout)
	three.createWidget(t, "w-three")
	eventually(t, "the cache of "+string(three.name())+" lists its Widget", func() error {
		return expectWidgets(t.Context(), e.Cluster.GetClient(), []string{"w-three"})
	})
	for _, gone := range []consumer{one, two} {
		if _, err := p.Get(t.Context(), gone.name()); !errors.Is(err, multicluster.ErrClusterNotFound) {
			t.Errorf("Get(%s) after its binding or workspace went: %v, want ErrClusterNotFound", gone.name(), err)
		}
	}
}

// TestControllerReconcilesEachWorkspace runs an mcr manager with the provider and a controller
// of the exported Widget: every consumer workspace's Widgets are reconciled in that workspace
// (the controller writes the cluster name into their status through the virtual workspace),
// including those of a workspace that binds after the manager started; a consumer whose binding
// or workspace is deleted leaves the manager's fleet while the others keep being reconciled.
func TestControllerReconcilesEachWorkspace(t *testing.T) {
	provider := newExport(t)
	consumers := newConsumers(t, provider, 2)
	logs := testLogs(t)

	cfg := server.WorkspaceConfig(provider.Path)
	p, err := kcp.New(cfg, exportName, providerOptions(logs))
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := mcr.NewManager(cfg, p, mcr.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 logs.Logger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	reconciled := sets.New[multicluster.ClusterName]()
	err = mcr.NewControllerManagedBy(mgr).
		Named(uniqueName("widgets")).
		For(newWidget("")).
		Complete(mcr.Func(func(ctx context.Context, req mcr.Request) (mcr.Result, error) {
			mu.Lock()
			reconciled.Insert(req.ClusterName)
			mu.Unlock()
			cl, err := mgr.GetCluster(ctx, req.ClusterName)
			if err != nil {
				return mcr.Result{}, err
			}
			w := newWidget(req.Name)
			if err := cl.GetClient().Get(ctx, req.NamespacedName, w); err != nil {
				return mcr.Result{}, client.IgnoreNotFound(err)
			}
			if got, _, _ := unstructured.NestedString(w.Object, "status", "cluster"); got == string(req.ClusterName) {
				return mcr.Result{}, nil
			}
			if err := unstructured.SetNestedField(w.Object, string(req.ClusterName), "status", "cluster"); err != nil {
				return mcr.Result{}, err
			}
			return mcr.Result{}, cl.GetClient().Status().Update(ctx, w)
		}))
	if err != nil {
		t.Fatal(err)
	}
	runManager(t, mgr)

	expectReconciled := func(c consumer, widget string) {
		t.Helper()
		eventually(t, "Widget "+widget+" of "+c.Path.String()+" reconciled in its logical cluster", func() error {
			got, err := c.widgetStatusCluster(t.Context(), t, widget)
			if err != nil {
				return err
			}
			if got != string(c.name()) {
				return fmt.Errorf("status.cluster is %q, want %q", got, c.name())
			}
			return nil
		})
	}
	for _, c := range consumers {
		c.createWidget(t, "first")
	}
	for _, c := range consumers {
		expectReconciled(c, "first")
	}

	// A workspace that binds while the manager runs joins the fleet.
	late := newConsumers(t, provider, 1)[0]
	late.createWidget(t, "first")
	expectReconciled(late, "first")

	// A deleted binding and a deleted workspace leave the fleet; the others stay.
	if err := server.DeleteBinding(t.Context(), consumers[0].Path, consumers[0].binding); err != nil {
		t.Fatal(err)
	}
	if err := server.DeleteWorkspace(t.Context(), consumers[1].Workspace); err != nil {
		t.Fatal(err)
	}
	for _, c := range consumers {
		eventually(t, string(c.name())+" leaves the manager's fleet", func() error {
			if _, err := mgr.GetCluster(t.Context(), c.name()); !errors.Is(err, multicluster.ErrClusterNotFound) {
				return fmt.Errorf("GetCluster: %v, want ErrClusterNotFound", err)
			}
			return nil
		})
	}
	late.createWidget(t, "second")
	expectReconciled(late, "second")

	mu.Lock()
	defer mu.Unlock()
	want := sets.New(consumers[0].name(), consumers[1].name(), late.name())
	if !reconciled.Equal(want) {
		t.Errorf("reconciled in %v, want %v", sets.List(reconciled), sets.List(want))
	}
}

// expectWidgets checks that r lists exactly the Widgets named want.
func expectWidgets(ctx context.Context, r client.Reader, want []string) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(widgetGVK.GroupVersion().WithKind(widgetGVK.Kind + "List"))
	if err := r.List(ctx, list); err != nil {
		return err
	}
	var got []string
	for _, w := range list.Items {
		got = append(got, w.GetName())
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("listed %q, want %q", got, want)
	}
	return nil
}

// runManager starts mgr until the test ends.
func runManager(t *testing.T, mgr mcr.Manager) {
	t.Helper()
	providertest.RunInBackground(t, "manager", waitTimeout, mgr.Start)
}
