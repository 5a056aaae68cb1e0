// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/milo"
	resourcemanagerv1alpha1 "mcr.dev/providers/milo/api/resourcemanager/v1alpha1"
	"mcr.dev/providers/milo/internal/frontproxy"
)

// TestHostRestart stops, on a fleet of its own, the Milo apiserver that holds the Projects (the
// provider's source of truth) while projects are engaged, keeps it down for longer than
// Options.CacheSyncTimeout and starts it again with its data and address. The engaged projects
// must stay engaged through the outage, and afterwards the provider must engage a project that
// becomes ready and disengage one that is deleted.
func TestHostRestart(t *testing.T) {
	const (
		cacheSyncTimeout = 5 * time.Second
		outage           = 3 * cacheSyncTimeout
	)
	f := envtest.StartForTest(t, "milo", "project")
	ctx := t.Context()
	admin, err := client.New(f.Member("milo").Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := installCRDs(ctx, admin); err != nil {
		t.Fatal(err)
	}
	px, err := frontproxy.Start(frontproxy.Options{Host: f.Member("milo").Config()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.Close)
	rules, err := providertest.ManifestRules("config/rbac.yaml", "ClusterRole")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := f.Member("milo").ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{Name: "milo-provider", ClusterRules: rules})
	if err != nil {
		t.Fatal(err)
	}
	sa, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	newReady := func(name string) {
		t.Helper()
		if err := px.Route(name, f.Member("project").Config()); err != nil {
			t.Fatal(err)
		}
		p := &resourcemanagerv1alpha1.Project{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       resourcemanagerv1alpha1.ProjectSpec{OwnerRef: resourcemanagerv1alpha1.OwnerReference{Kind: "Organization", Name: "acme"}},
		}
		providertest.Eventually(t, waitTimeout, "creating ready Project "+name, func() error {
			if err := admin.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
				if err := client.IgnoreNotFound(err); err != nil {
					return err
				}
				if err := admin.Create(ctx, p); err != nil {
					return err
				}
			}
			meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{
				Type: resourcemanagerv1alpha1.ProjectReady, Status: metav1.ConditionTrue, Reason: "Ready", Message: "set by the test",
			})
			return admin.Status().Update(ctx, p)
		})
	}
	newReady("stays")
	newReady("goes")

	logs := &providertest.LogBuffer{}
	p, err := milo.New(px.Config(sa.BearerToken), milo.Options{Options: kit.Options{
		CacheSyncTimeout: cacheSyncTimeout,
		RetryMinDelay:    100 * time.Millisecond,
		RetryMaxDelay:    2 * time.Second,
		Logger:           logs.Logger(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	rec := providertest.Start(t, p, waitTimeout).Recorder
	eStays := rec.WaitEngaged(t, p, milo.ClusterName("stays"), waitTimeout)
	eGoes := rec.WaitEngaged(t, p, milo.ClusterName("goes"), waitTimeout)

	if err := f.Member("milo").Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("the Milo apiserver stopped for %s (CacheSyncTimeout %s)", outage, cacheSyncTimeout)
	// The engagements must live through the whole outage, not only at its end.
	deadline := time.Now().Add(outage)
	for time.Now().Before(deadline) {
		if !eStays.Alive() || !eGoes.Alive() {
			t.Fatal("a project was disengaged while the Milo apiserver was down")
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err := f.Member("milo").Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	t.Log("the Milo apiserver started again")

	newReady("added")
	providertest.Eventually(t, waitTimeout, "deleting Project goes", func() error {
		return admin.Delete(ctx, &resourcemanagerv1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: "goes"}})
	})
	rec.WaitEngaged(t, p, milo.ClusterName("added"), waitTimeout)
	t.Logf("a project added after the restart was engaged %s after it", time.Since(restarted).Round(100*time.Millisecond))
	rec.WaitDisengaged(t, p, milo.ClusterName("goes"), eGoes, waitTimeout)
	t.Logf("a project deleted after the restart was disengaged %s after it", time.Since(restarted).Round(100*time.Millisecond))
	if !eStays.Alive() {
		t.Error("the project that stayed was disengaged")
	}
	if n := rec.Count(milo.ClusterName("stays")); n != 1 {
		t.Errorf("the project that stayed was engaged %d times, want once", n)
	}
	if _, err := p.Get(ctx, milo.ClusterName("stays")); err != nil {
		t.Error(fmt.Errorf("Get of the project that stayed: %w", err))
	}
}
