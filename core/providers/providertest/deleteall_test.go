// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"mcr.dev/core/providers/providertest"
)

func TestDeleteAllDeletesWhatItLists(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "one"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "two"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "kept"}},
	).Build()
	providertest.DeleteAll(t, c, &corev1.SecretList{}, client.InNamespace("a"))
	var left corev1.SecretList
	if err := c.List(t.Context(), &left); err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 1 || left.Items[0].Name != "kept" {
		t.Errorf("left %v, want only b/kept", left.Items)
	}
}

func TestRestartFleetDeleteDeletesTheMembersObject(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "goes"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "stays"}},
	).Build()
	f := providertest.RestartFleet{Namespace: "fleet", Client: c}
	remove := f.Delete(&corev1.Secret{})
	if err := remove(t.Context(), "goes"); err != nil {
		t.Fatal(err)
	}
	if err := remove(t.Context(), "goes"); err == nil {
		t.Error("deleting a member that is gone succeeded")
	}
	var left corev1.SecretList
	if err := c.List(t.Context(), &left); err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 1 || left.Items[0].Name != "stays" {
		t.Errorf("left %v, want only fleet/stays", left.Items)
	}
}
