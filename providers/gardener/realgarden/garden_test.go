// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package realgarden_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"mcr.dev/providers/gardener"
)

// TestEngagesUsableShoots follows a Shoot created through gardener-apiserver through creation,
// hibernation, wake-up, an API server outage and deletion, and checks that it is engaged
// exactly while ShootUsable holds, each time with admin credentials the real adminkubeconfig
// subresource issued for the shoot server.
func TestEngagesUsableShoots(t *testing.T) {
	ns := newProject(t, "life")
	server := garden.ShootServers()[0]
	r := startProvider(t, ns, gardener.Options{})
	name := gardener.ShootClusterName(ns, "life")
	key := client.ObjectKey{Namespace: ns, Name: "life"}

	// Created, not yet reconciled by gardenlet: no last operation.
	if err := createShoot(t.Context(), ns, "life", server); err != nil {
		t.Fatal(err)
	}
	r.waitLogged(t, name, "Cluster not engaged: the Shoot has no last operation yet")
	if err := updateShoot(t.Context(), key, true, func(s *gardencorev1beta1.Shoot) {
		s.Status = usableStatus(ns, "life", server.Host())
		s.Status.LastOperation.State = gardencorev1beta1.LastOperationStateProcessing
	}); err != nil {
		t.Fatal(err)
	}
	r.waitLogged(t, name, "Cluster not engaged: the Shoot's creation has not succeeded (last operation Create, state Processing)")
	if got := r.rec.Engaged(); len(got) != 0 {
		t.Fatalf("engaged %v before the Shoot was created", got)
	}

	if err := updateShoot(t.Context(), key, true, func(s *gardencorev1beta1.Shoot) {
		s.Status.LastOperation.State = gardencorev1beta1.LastOperationStateSucceeded
	}); err != nil {
		t.Fatal(err)
	}
	first := r.waitEngaged(t, name)
	r.requireReaches(t, name, server)

	// Hibernation disengages at once, waking up engages with fresh credentials.
	if err := updateShoot(t.Context(), key, false, func(s *gardencorev1beta1.Shoot) {
		s.Spec.Hibernation = &gardencorev1beta1.Hibernation{Enabled: ptr.To(true)}
	}); err != nil {
		t.Fatal(err)
	}
	r.rec.WaitDisengaged(t, r.provider, name, first, waitTimeout)
	if err := updateShoot(t.Context(), key, false, func(s *gardencorev1beta1.Shoot) {
		s.Spec.Hibernation.Enabled = ptr.To(false)
	}); err != nil {
		t.Fatal(err)
	}
	second := r.rec.WaitReengaged(t, r.provider, name, first, waitTimeout)
	r.requireReaches(t, name, server)

	// An API server gardenlet reports unavailable is disengaged.
	if err := setAPIServerAvailable(t.Context(), key, gardencorev1beta1.ConditionFalse); err != nil {
		t.Fatal(err)
	}
	r.rec.WaitDisengaged(t, r.provider, name, second, waitTimeout)
	if err := setAPIServerAvailable(t.Context(), key, gardencorev1beta1.ConditionTrue); err != nil {
		t.Fatal(err)
	}
	third := r.rec.WaitReengaged(t, r.provider, name, second, waitTimeout)

	if err := deleteShoot(t.Context(), ns, "life"); err != nil {
		t.Fatal(err)
	}
	r.rec.WaitDisengaged(t, r.provider, name, third, waitTimeout)
	r.waitLogged(t, name, "Disengaged cluster: the Shoot is gone")
}

// TestRotatesWithTheClientCA rotates a Shoot's client CA the way Gardener does: the new CA is
// trusted beside the old one and the Shoot's status reports the rotation; the provider requests
// new credentials from adminkubeconfig (signed by the new CA) and engages the cluster again,
// which keeps working once the shoot server drops the old CA.
func TestRotatesWithTheClientCA(t *testing.T) {
	ns := newProject(t, "rotate")
	server := garden.ShootServers()[1]
	r := startProvider(t, ns, gardener.Options{})
	name := gardener.ShootClusterName(ns, "rotate")
	key := client.ObjectKey{Namespace: ns, Name: "rotate"}
	if err := usableShoot(t.Context(), ns, "rotate", server); err != nil {
		t.Fatal(err)
	}
	first := r.waitEngaged(t, name)
	r.requireReaches(t, name, server)

	revoke, err := garden.RotateClientCA(t.Context(), admin, ns, "rotate")
	if err != nil {
		t.Fatal(err)
	}
	if err := updateShoot(t.Context(), key, true, func(s *gardencorev1beta1.Shoot) {
		now := metav1.Now()
		s.Status.Credentials = &gardencorev1beta1.ShootCredentials{Rotation: &gardencorev1beta1.ShootCredentialsRotation{
			CertificateAuthorities: &gardencorev1beta1.CARotation{Phase: gardencorev1beta1.RotationPrepared, LastInitiationTime: &now},
		}}
	}); err != nil {
		t.Fatal(err)
	}
	second := r.rec.WaitReengaged(t, r.provider, name, first, waitTimeout)
	if err := revoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.requireReaches(t, name, server)
	if second.Ctx.Err() != nil {
		t.Error("the cluster engaged with the new credentials was disengaged")
	}
}
