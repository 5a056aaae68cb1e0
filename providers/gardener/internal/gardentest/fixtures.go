// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardentest

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
)

// The fixtures a landscape has before anyone creates a Shoot, which Gardener's admission checks
// every Shoot against: the CloudProfile "local" and a Project per project namespace.
const (
	cloudProfileName  = "local"
	kubernetesVersion = "1.34.0"
)

// Shoot returns a Shoot that gardener-apiserver admits in a project of this garden: a
// workerless shoot of the "local" CloudProfile (no cloud credentials, machines or networks to
// declare).
func Shoot(namespace, name string) *gardencorev1beta1.Shoot {
	return &gardencorev1beta1.Shoot{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: gardencorev1beta1.ShootSpec{
			CloudProfile: &gardencorev1beta1.CloudProfileReference{Kind: "CloudProfile", Name: cloudProfileName},
			Region:       "local",
			Provider:     gardencorev1beta1.Provider{Type: "local"},
			Kubernetes:   gardencorev1beta1.Kubernetes{Version: kubernetesVersion},
		},
	}
}

// createCloudProfile creates the CloudProfile the Shoots of Shoot refer to.
func createCloudProfile(ctx context.Context, c client.Client) error {
	cp := &gardencorev1beta1.CloudProfile{
		ObjectMeta: metav1.ObjectMeta{Name: cloudProfileName},
		Spec: gardencorev1beta1.CloudProfileSpec{
			Type:       "local",
			Kubernetes: gardencorev1beta1.KubernetesSettings{Versions: []gardencorev1beta1.ExpirableVersion{{Version: kubernetesVersion}}},
			Regions:    []gardencorev1beta1.Region{{Name: "local"}},
			MachineImages: []gardencorev1beta1.MachineImage{{
				Name:     "local",
				Versions: []gardencorev1beta1.MachineImageVersion{{ExpirableVersion: gardencorev1beta1.ExpirableVersion{Version: "1.0.0"}, CRI: []gardencorev1beta1.CRI{{Name: gardencorev1beta1.CRINameContainerD}}}},
			}},
			MachineTypes: []gardencorev1beta1.MachineType{{Name: "local", CPU: resourceQuantity("1"), GPU: resourceQuantity("0"), Memory: resourceQuantity("1Gi"), Usable: ptr.To(true)}},
		},
	}
	if err := c.Create(ctx, cp); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("gardentest: creating CloudProfile %s: %w", cloudProfileName, err)
	}
	return nil
}

// NewProject creates the project namespace garden-<project> and the Project that owns it, as
// a Gardener user does, through c (a client of the garden with the core.gardener.cloud types),
// and returns the namespace.
func (g *Garden) NewProject(ctx context.Context, c client.Client, project string) (string, error) {
	namespace := "garden-" + project
	if len(project) > 10 {
		return "", fmt.Errorf("gardentest: project name %q: Gardener allows at most 10 characters", project)
	}
	// gardener-controller-manager would create the namespace; it does not run here.
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: namespace, Labels: map[string]string{"gardener.cloud/role": "project", "project.gardener.cloud/name": project},
	}}); err != nil {
		return "", fmt.Errorf("gardentest: creating namespace %s: %w", namespace, err)
	}
	p := &gardencorev1beta1.Project{
		ObjectMeta: metav1.ObjectMeta{Name: project},
		Spec: gardencorev1beta1.ProjectSpec{
			Namespace: ptr.To(namespace),
			Owner:     &rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "owner@example.com"},
		},
	}
	if err := c.Create(ctx, p); err != nil {
		return "", fmt.Errorf("gardentest: creating Project %s: %w", project, err)
	}
	return namespace, nil
}

func resourceQuantity(s string) resource.Quantity { return resource.MustParse(s) }
