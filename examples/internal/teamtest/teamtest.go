// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package teamtest holds the checks the smoke tests of the single-to-multi example share: both
// programs must have the same effect on a cluster.
package teamtest

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CreateTeamNamespace creates a namespace labeled team=<team>.
func CreateTeamNamespace(t testing.TB, c client.Client, name, team string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": team}}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
}

// HasTeamConfigMap is a condition: the namespace has the ConfigMap "team" naming team, owned by
// the namespace.
func HasTeamConfigMap(c client.Client, namespace, team string) func(context.Context) error {
	return func(ctx context.Context) error {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "team"}, cm); err != nil {
			return err
		}
		if cm.Data["team"] != team {
			return fmt.Errorf("ConfigMap %s/team names team %q, want %q", namespace, cm.Data["team"], team)
		}
		owner := metav1.GetControllerOf(cm)
		if owner == nil || owner.Kind != "Namespace" || owner.Name != namespace {
			return fmt.Errorf("ConfigMap %s/team is controlled by %v, want Namespace %s", namespace, owner, namespace)
		}
		return nil
	}
}
