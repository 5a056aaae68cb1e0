// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/providers/providertest"
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
	program := providertest.StartUpstreamProgram(t, hub.Config(), provider, mcmanager.Options{}, func(mgr mcmanager.Manager) error {
		return provider.SetupWithManager(ctx, mgr)
	})

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
	program.WaitEngaged(t, "east", member.Host(), ns, "widget", "blue")

	if err := hubClient.Delete(ctx, secret); err != nil {
		t.Fatal(err)
	}
	program.WaitDisengaged(t, "east")
}
