// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener_test

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/gardener"
	"mcr.dev/providers/gardener/internal/frontproxy"
)

// TestHostRestart stops the host apiserver, which is the seed of a seed provider and, behind a
// front-proxy, the garden of a garden provider, while both have members engaged, for longer
// than the providers' CacheSyncTimeout, and starts it again (providertest.RunRestartTest). It
// runs on a fleet of its own, so that the outage disturbs no other test.
func TestHostRestart(t *testing.T) {
	t.Parallel()
	f := envtest.StartForTest(t, "seed", "shoot")
	seedMember := f.Member("seed")
	if err := installCRDs(t.Context(), seedMember.Config()); err != nil {
		t.Fatal(err)
	}
	c := seedMember.ClientForTest(t, client.Options{Scheme: scheme})
	const technicalIDPrefix = "shoot--restart--"
	// add creates the control plane of shoot name: its namespace, Secret "gardener" and
	// Cluster object.
	add := func(ctx context.Context, name string) (string, error) {
		kubeconfig, err := f.Member("shoot").ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{Name: name})
		if err != nil {
			return "", err
		}
		technicalID := technicalIDPrefix + name
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: technicalID}}); err != nil {
			return "", err
		}
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: technicalID, Name: gardener.SeedSecretName},
			Data:       map[string][]byte{gardener.SeedKubeconfigKey: kubeconfig},
		}
		if err := c.Create(ctx, secret); err != nil {
			return "", err
		}
		raw, err := json.Marshal(embeddedShoot("restart", name, nil))
		if err != nil {
			return "", err
		}
		obj := &extensionsv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: technicalID},
			Spec: extensionsv1alpha1.ClusterSpec{
				CloudProfile: runtime.RawExtension{Raw: []byte(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"CloudProfile","metadata":{"name":"local"}}`)},
				Seed:         runtime.RawExtension{Raw: []byte(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Seed","metadata":{"name":"local"}}`)},
				Shoot:        runtime.RawExtension{Raw: raw},
			},
		}
		return technicalID, c.Create(ctx, obj)
	}
	// The garden: Shoots backed by the shoot member, reached through a front-proxy.
	minter, err := frontproxy.NewServiceAccountMinter(map[string]*rest.Config{f.Member("shoot").Host(): f.Member("shoot").Config()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(minter.Close)
	proxy, err := frontproxy.Start(frontproxy.Options{Garden: seedMember.Config(), Mint: minter.Mint})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	rules := providertest.MustManifestRules(t, "config/rbac-garden.yaml", "ClusterRole")
	identity, err := seedMember.ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{Name: "garden", ClusterRules: rules})
	if err != nil {
		t.Fatal(err)
	}
	gardenCfg, err := clientcmd.RESTConfigFromKubeConfig(identity)
	if err != nil {
		t.Fatal(err)
	}
	const project = "garden-restart"
	if err := c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: project}}); err != nil {
		t.Fatal(err)
	}
	addShoot := func(ctx context.Context, name string) error {
		shoot := &gardencorev1beta1.Shoot{
			ObjectMeta: metav1.ObjectMeta{Namespace: project, Name: name},
			Spec:       gardencorev1beta1.ShootSpec{Region: "local", Provider: gardencorev1beta1.Provider{Type: "local"}},
		}
		if err := c.Create(ctx, shoot); err != nil {
			return err
		}
		shoot.Status = usableStatus(project, name, f.Member("shoot").Host())
		return c.Status().Update(ctx, shoot)
	}
	kitOptions := providertest.RestartKitOptions()
	p, err := gardener.New(seedMember.Config(), gardener.Options{Topology: gardener.TopologySeed, Options: kitOptions})
	if err != nil {
		t.Fatal(err)
	}
	gp, err := gardener.New(proxy.ConfigFor(gardenCfg), gardener.Options{Namespaces: []string{project}, Options: kitOptions})
	if err != nil {
		t.Fatal(err)
	}
	providertest.RunRestartTest(t, providertest.RestartTest{
		Host: seedMember, Wait: waitTimeout,
		Subjects: []providertest.RestartSubject{{
			Provider: p,
			Add: func(ctx context.Context, name string) (multicluster.ClusterName, error) {
				technicalID, err := add(ctx, name)
				return gardener.SeedClusterName(technicalID), err
			},
			Remove: func(ctx context.Context, name string) error {
				return c.Delete(ctx, &extensionsv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: technicalIDPrefix + name}})
			},
		}, {
			Provider: gp,
			Add: func(ctx context.Context, name string) (multicluster.ClusterName, error) {
				return gardener.ShootClusterName(project, name), addShoot(ctx, name)
			},
			Remove: func(ctx context.Context, name string) error {
				return c.Delete(ctx, &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: project, Name: name}})
			},
		}},
	})
}
