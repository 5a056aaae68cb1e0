// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	resourcemanagerv1alpha1 "mcr.dev/providers/milo/api/resourcemanager/v1alpha1"
)

// controlPlaneClient returns a clientset for a project's control plane behind the proxy, as
// the caller whose config base is.
func controlPlaneClient(t *testing.T, base *rest.Config, project string) *kubernetes.Clientset {
	t.Helper()
	cfg := rest.CopyConfig(base)
	cfg.Host = proxy.ControlPlaneURL(project)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestFrontProxy checks that the test stand-in for the Milo apiserver serves what the provider's
// tests rely on, against the real apiservers behind it.
func TestFrontProxy(t *testing.T) {
	name := uniqueName("fp")
	route(t, name, "alpha")

	t.Run("ProjectPathsNeedAToken", func(t *testing.T) {
		anonymous := rest.CopyConfig(provider)
		anonymous.BearerToken = ""
		_, err := controlPlaneClient(t, anonymous, name).CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Errorf("without a token: %v, want Unauthorized", err)
		}
		forged := rest.CopyConfig(provider)
		forged.BearerToken = "not-a-token"
		_, err = controlPlaneClient(t, forged, name).CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Errorf("with a token the host does not know: %v, want Unauthorized", err)
		}
	})

	t.Run("UnknownProjectIsNotFound", func(t *testing.T) {
		_, err := controlPlaneClient(t, provider, uniqueName("nowhere")).CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("unrouted project: %v, want NotFound", err)
		}
	})

	t.Run("HostSeesTheCallersCredentials", func(t *testing.T) {
		c, err := client.New(provider, client.Options{Scheme: scheme})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.List(t.Context(), &resourcemanagerv1alpha1.ProjectList{}); err != nil {
			t.Errorf("listing Projects as the provider: %v", err)
		}
		// An identity without access to Projects is refused by the host's RBAC, so the proxy
		// forwarded the caller's token and not credentials of its own.
		kubeconfig, err := fleet.Member("milo").ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{Name: "no-projects"})
		if err != nil {
			t.Fatal(err)
		}
		saCfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		limited, err := client.New(proxy.Config(saCfg.BearerToken), client.Options{Scheme: scheme})
		if err != nil {
			t.Fatal(err)
		}
		if err := limited.List(t.Context(), &resourcemanagerv1alpha1.ProjectList{}); !apierrors.IsForbidden(err) {
			t.Errorf("listing Projects as an identity without access: %v, want Forbidden", err)
		}
	})

	t.Run("ImpersonationDoesNotReachTheMember", func(t *testing.T) {
		// Were the header forwarded, the member's admin would act as "nobody" and be refused.
		cfg := rest.CopyConfig(provider)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "nobody"}
		if _, err := controlPlaneClient(t, cfg, name).CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{}); err != nil {
			t.Errorf("listing through the project path with an impersonation header: %v", err)
		}
	})

	t.Run("WatchStreamsAndEndsOnUnroute", func(t *testing.T) {
		project := uniqueName("fp-watch")
		route(t, project, "beta")
		cs := controlPlaneClient(t, provider, project)
		ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
		defer cancel()
		w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + project})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		direct, err := client.New(fleet.Member("beta").Config(), client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: project}}
		if err := direct.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = direct.Delete(context.Background(), cm) })
		// The event arrives while the response is still open: the proxy flushed it.
		select {
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type != watch.Added {
				t.Fatalf("first watch event: %v (open %t), want ADDED", ev.Type, ok)
			}
		case <-ctx.Done():
			t.Fatal("no watch event through the proxy")
		}

		proxy.Unroute(project)
		deadline := time.After(waitTimeout)
		for {
			select {
			case _, ok := <-w.ResultChan():
				if !ok {
					return
				}
			case <-deadline:
				t.Fatal("the watch stayed open after its project's route was removed")
			}
		}
	})
}
