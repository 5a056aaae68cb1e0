// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"mcr.dev/providers/gardener"
)

// TestShootUsable checks every rule of ShootUsable and ShootAwake.
func TestShootUsable(t *testing.T) {
	usable := func(change func(*gardencorev1beta1.Shoot)) *gardencorev1beta1.Shoot {
		s := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-dev", Name: "s"}}
		s.Status = usableStatus("garden-dev", "s", "https://api.s.dev.example.com")
		if change != nil {
			change(s)
		}
		return s
	}
	condition := func(status gardencorev1beta1.ConditionStatus) func(*gardencorev1beta1.Shoot) {
		return func(s *gardencorev1beta1.Shoot) { s.Status.Conditions[0].Status = status }
	}
	operation := func(typ gardencorev1beta1.LastOperationType, state gardencorev1beta1.LastOperationState) func(*gardencorev1beta1.Shoot) {
		return func(s *gardencorev1beta1.Shoot) {
			s.Status.LastOperation.Type, s.Status.LastOperation.State = typ, state
		}
	}
	for _, tc := range []struct {
		name          string
		shoot         *gardencorev1beta1.Shoot
		usable, awake bool
		problem       string
	}{
		{"created and healthy", usable(nil), true, true, ""},
		{"being deleted", usable(func(s *gardencorev1beta1.Shoot) { s.DeletionTimestamp = ptr.To(metav1.Now()) }), false, false, "being deleted"},
		{"hibernating", usable(func(s *gardencorev1beta1.Shoot) {
			s.Spec.Hibernation = &gardencorev1beta1.Hibernation{Enabled: ptr.To(true)}
		}), false, false, "spec.hibernation.enabled"},
		{"waking up", usable(func(s *gardencorev1beta1.Shoot) {
			s.Spec.Hibernation = &gardencorev1beta1.Hibernation{Enabled: ptr.To(false)}
			s.Status.IsHibernated = true
		}), false, false, "status.hibernated"},
		{"no last operation", usable(func(s *gardencorev1beta1.Shoot) { s.Status.LastOperation = nil }), false, true, "no last operation"},
		{"being created", usable(operation(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateProcessing)), false, true, "state Processing"},
		{"creation failed", usable(operation(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateFailed)), false, true, "state Failed"},
		{"reconcile failing", usable(operation(gardencorev1beta1.LastOperationTypeReconcile, gardencorev1beta1.LastOperationStateError)), true, true, ""},
		{"migrating", usable(operation(gardencorev1beta1.LastOperationTypeMigrate, gardencorev1beta1.LastOperationStateProcessing)), true, true, ""},
		{"API server down", usable(condition(gardencorev1beta1.ConditionFalse)), false, true, "APIServerAvailable is False"},
		{"API server flaky", usable(condition(gardencorev1beta1.ConditionProgressing)), true, true, ""},
		{"gardenlet lost contact", usable(condition(gardencorev1beta1.ConditionUnknown)), true, true, ""},
		{"not yet checked", usable(func(s *gardencorev1beta1.Shoot) { s.Status.Conditions = nil }), true, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := gardener.ShootUsable(t.Context(), tc.shoot); got != tc.usable {
				t.Errorf("ShootUsable = %t, want %t", got, tc.usable)
			}
			if got := gardener.ShootAwake(t.Context(), tc.shoot); got != tc.awake {
				t.Errorf("ShootAwake = %t, want %t", got, tc.awake)
			}
			got := gardener.ShootProblem(tc.shoot)
			if (tc.problem == "") != (got == "") || !strings.Contains(got, tc.problem) {
				t.Errorf("ShootProblem = %q, want it to contain %q", got, tc.problem)
			}
		})
	}
}

// TestShootOfCluster decodes the Shoot embedded in a Cluster object, and refuses what is not
// one.
func TestShootOfCluster(t *testing.T) {
	c := &extensionsv1alpha1.Cluster{Spec: extensionsv1alpha1.ClusterSpec{Shoot: runtime.RawExtension{
		Raw: []byte(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"namespace":"garden-dev","name":"s"},"spec":{"hibernation":{"enabled":true}}}`),
	}}}
	shoot, err := gardener.ShootOfCluster(c)
	if err != nil {
		t.Fatal(err)
	}
	if shoot.Namespace != "garden-dev" || shoot.Name != "s" || !*shoot.Spec.Hibernation.Enabled {
		t.Errorf("decoded %s/%s hibernation %v", shoot.Namespace, shoot.Name, shoot.Spec.Hibernation)
	}
	for _, raw := range []string{"", "null", `{"metadata": 1}`} {
		c.Spec.Shoot = runtime.RawExtension{Raw: []byte(raw)}
		if _, err := gardener.ShootOfCluster(c); err == nil || !strings.Contains(err.Error(), "spec.shoot") {
			t.Errorf("ShootOfCluster(%q) = %v, want an error naming spec.shoot", raw, err)
		}
	}
}

// TestNames checks both naming schemes and that names map back to their objects.
func TestNames(t *testing.T) {
	if got := gardener.ShootClusterName("garden-dev", "my-shoot"); got != "garden-dev/my-shoot" {
		t.Errorf("ShootClusterName = %q", got)
	}
	if got := gardener.SeedClusterName("shoot--dev--my-shoot"); got != "shoot--dev--my-shoot" {
		t.Errorf("SeedClusterName = %q", got)
	}
	for _, tc := range []struct {
		name, ns, obj string
	}{
		{"garden-dev/my-shoot", "garden-dev", "my-shoot"},
		{"shoot--dev--my-shoot", "", "shoot--dev--my-shoot"},
	} {
		key, err := gardener.ClusterKey(multiclusterName(tc.name))
		if err != nil || key.Namespace != tc.ns || key.Name != tc.obj {
			t.Errorf("ClusterKey(%q) = %v, %v", tc.name, key, err)
		}
	}
	for _, bad := range []string{"", "/shoot--dev--x", "garden-dev/", "a/b/c"} {
		if _, err := gardener.ClusterKey(multiclusterName(bad)); err == nil {
			t.Errorf("ClusterKey(%q) succeeded", bad)
		}
	}
}
