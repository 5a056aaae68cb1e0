// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/providertest"
)

// TestDeletingMembers runs DeleteAll and RestartFleet.Delete on a real apiserver: each deletes
// exactly the objects it names and nothing else.
func TestDeletingMembers(t *testing.T) {
	t.Parallel()
	host := envtest.StartForTest(t, "host").Member("host")
	c := host.ClientForTest(t, client.Options{})
	secrets := func(ns string, names ...string) {
		t.Helper()
		for _, name := range names {
			if err := c.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	left := func(ns string) []string {
		t.Helper()
		var list corev1.SecretList
		if err := c.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range list.Items {
			names = append(names, s.Name)
		}
		return names
	}

	t.Run("DeleteAll deletes what it lists", func(t *testing.T) {
		a := envtest.NamespaceForTest(t, "a", host)
		b := envtest.NamespaceForTest(t, "b", host)
		secrets(a, "one", "two")
		secrets(b, "kept")
		providertest.DeleteAll(t, c, &corev1.SecretList{}, client.InNamespace(a))
		if got := left(a); len(got) != 0 {
			t.Errorf("left %v in %s, want none", got, a)
		}
		if got := left(b); len(got) != 1 || got[0] != "kept" {
			t.Errorf("left %v in %s, want only kept", got, b)
		}
	})

	t.Run("RestartFleet.Delete deletes the member's object", func(t *testing.T) {
		ns := envtest.NamespaceForTest(t, "fleet", host)
		secrets(ns, "goes", "stays")
		remove := providertest.RestartFleet{Namespace: ns, Client: c}.Delete(&corev1.Secret{})
		if err := remove(t.Context(), "goes"); err != nil {
			t.Fatal(err)
		}
		if err := remove(t.Context(), "goes"); err == nil {
			t.Error("deleting a member that is gone succeeded")
		}
		if got := left(ns); len(got) != 1 || got[0] != "stays" {
			t.Errorf("left %v in %s, want only stays", got, ns)
		}
	})
}
