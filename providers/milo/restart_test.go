// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/milo"
	resourcemanagerv1alpha1 "mcr.dev/providers/milo/api/resourcemanager/v1alpha1"
	"mcr.dev/providers/milo/internal/frontproxy"
)

// TestHostRestart stops, on a fleet of its own, the Milo apiserver that holds the Projects (the
// provider's source of truth) while projects are engaged, for longer than
// Options.CacheSyncTimeout, and starts it again with its data and address
// (providertest.RunRestartTest).
func TestHostRestart(t *testing.T) {
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
	rules := providertest.MustManifestRules(t, "config/rbac.yaml", "ClusterRole")
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
	p, err := milo.New(px.Config(sa.BearerToken), milo.Options{Options: providertest.RestartKitOptions()})
	if err != nil {
		t.Fatal(err)
	}
	providertest.RunRestartTest(t, providertest.RestartTest{
		Host: f.Member("milo"), Wait: waitTimeout,
		Subjects: []providertest.RestartSubject{{
			Provider: p,
			Add: func(_ context.Context, name string) (multicluster.ClusterName, error) {
				newReady(name)
				return milo.ClusterName(name), nil
			},
			Remove: func(ctx context.Context, name string) error {
				// Retried: the apiserver may still be coming up right after the restart.
				providertest.Eventually(t, waitTimeout, "deleting Project "+name, func() error {
					return admin.Delete(ctx, &resourcemanagerv1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: name}})
				})
				return nil
			},
		}},
	})
}
