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
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/milo"
	resourcemanagerv1alpha1 "mcr.dev/providers/milo/api/resourcemanager/v1alpha1"
	"mcr.dev/providers/milo/internal/frontproxy"
)

// TestHostRestart stops the Milo apiserver that holds the Projects (the provider's source of
// truth) while projects are engaged, for longer than Options.CacheSyncTimeout, and starts it
// again with its data and address (providertest.RunRestartTest).
func TestHostRestart(t *testing.T) {
	providertest.RunRestartTest(t, providertest.RestartTest{Scheme: scheme, Wait: waitTimeout, Subjects: restartProjects})
}

// restartProjects are ready Projects of the host, whose control planes a front-proxy routes to
// the fleet's member; the provider reads them as a ServiceAccount with config/rbac.yaml.
func restartProjects(t *testing.T, f providertest.RestartFleet) []providertest.RestartSubject {
	ctx := t.Context()
	if err := installCRDs(ctx, f.Client); err != nil {
		t.Fatal(err)
	}
	px, err := frontproxy.Start(frontproxy.Options{Host: f.Host.Config()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.Close)
	rules := providertest.MustManifestRules(t, "config/rbac.yaml", "ClusterRole")
	kubeconfig, err := f.Host.ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{Name: "milo-provider", ClusterRules: rules})
	if err != nil {
		t.Fatal(err)
	}
	sa, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// Retried, as is Remove: the apiserver may still be coming up right after the restart.
	newReady := func(name string) {
		t.Helper()
		if err := px.Route(name, f.Member.Config()); err != nil {
			t.Fatal(err)
		}
		p := &resourcemanagerv1alpha1.Project{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       resourcemanagerv1alpha1.ProjectSpec{OwnerRef: resourcemanagerv1alpha1.OwnerReference{Kind: "Organization", Name: "acme"}},
		}
		providertest.Eventually(t, waitTimeout, "creating ready Project "+name, func() error {
			if err := f.Client.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
				if err := client.IgnoreNotFound(err); err != nil {
					return err
				}
				if err := f.Client.Create(ctx, p); err != nil {
					return err
				}
			}
			meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{
				Type: resourcemanagerv1alpha1.ProjectReady, Status: metav1.ConditionTrue, Reason: "Ready", Message: "set by the test",
			})
			return f.Client.Status().Update(ctx, p)
		})
	}
	return []providertest.RestartSubject{{
		New: func(o kit.Options) (providertest.Provider, error) {
			return milo.New(px.Config(sa.BearerToken), milo.Options{Options: o})
		},
		Add: func(_ context.Context, name string) (multicluster.ClusterName, error) {
			newReady(name)
			return milo.ClusterName(name), nil
		},
		Remove: func(ctx context.Context, name string) error {
			providertest.Eventually(t, waitTimeout, "deleting Project "+name, func() error {
				return f.Client.Delete(ctx, &resourcemanagerv1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: name}})
			})
			return nil
		},
	}}
}
