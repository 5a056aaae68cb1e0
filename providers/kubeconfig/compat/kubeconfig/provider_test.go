// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "mcr.dev/core/builder"
	"mcr.dev/core/envtest"
	mcmanager "mcr.dev/core/manager"
	mcreconcile "mcr.dev/core/reconcile"
	"mcr.dev/providers/kubeconfig/compat/kubeconfig"
)

// A program written for multicluster-runtime's kubeconfig provider runs as its documentation
// says: New, mcmanager.New, an index registered before SetupWithManager, SetupWithManager, a
// Secret labeled with multicluster-runtime's label engages its member under the Secret's name,
// the index reaches it, and deleting the Secret disengages it.
func TestUpstreamUsage(t *testing.T) {
	fleet := envtest.StartForTest(t, "hub", "member")
	ctx := t.Context()
	hub, member := fleet.Member("hub"), fleet.Member("member")
	hubClient, err := client.New(hub.Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	memberClient, err := client.New(member.Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const ns = "fleet"
	for _, c := range []client.Client{hubClient, memberClient} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}

	provider := kubeconfig.New(kubeconfig.Options{Namespace: ns})
	mgr, err := mcmanager.New(hub.Config(), provider, mcmanager.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, "color", func(o client.Object) []string {
		return []string{o.(*corev1.ConfigMap).Data["color"]}
	}); err != nil {
		t.Fatal(err)
	}
	if err := provider.SetupWithManager(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	if err := provider.SetupWithManager(ctx, mgr); err == nil {
		t.Error("a second SetupWithManager did not fail")
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	if err := mcbuilder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Complete(mcreconcile.Func(
		func(_ context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			seen[string(req.ClusterName)+"/"+req.Name] = true
			return reconcile.Result{}, nil
		})); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	if err := memberClient.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget"}, Data: map[string]string{"color": "blue"}}); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "east", Labels: map[string]string{kubeconfig.DefaultKubeconfigSecretLabel: "true"}},
		Data:       map[string][]byte{kubeconfig.DefaultKubeconfigSecretKey: member.Kubeconfig()},
	}
	if err := hubClient.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a reconcile of east/widget", func() error {
		mu.Lock()
		defer mu.Unlock()
		if !seen["east/widget"] {
			return fmt.Errorf("seen %v", seen)
		}
		return nil
	})
	cl, err := provider.Get(ctx, "east")
	if err != nil {
		t.Fatal(err)
	}
	var list corev1.ConfigMapList
	if err := cl.GetCache().List(ctx, &list, client.MatchingFields{"color": "blue"}); err != nil || len(list.Items) != 1 {
		t.Errorf("the index registered before SetupWithManager: %d items, %v", len(list.Items), err)
	}
	if names := provider.ListClusters(); len(names) != 1 || names[0] != "east" {
		t.Errorf("ListClusters = %v", names)
	}

	if err := hubClient.Delete(ctx, secret); err != nil {
		t.Fatal(err)
	}
	eventually(t, "east disengaged", func() error {
		if _, err := provider.Get(ctx, "east"); err == nil {
			return fmt.Errorf("still served")
		}
		return nil
	})
}

func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
