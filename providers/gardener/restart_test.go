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

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/gardener"
	"mcr.dev/providers/gardener/internal/frontproxy"
)

// TestHostRestart stops the host apiserver, which is the seed of a seed provider and, behind a
// front-proxy, the garden of a garden provider, while both have members engaged, for longer
// than the providers' CacheSyncTimeout, and starts it again (providertest.RunRestartTest).
func TestHostRestart(t *testing.T) {
	providertest.RunRestartTest(t, providertest.RestartTest{Scheme: scheme, Install: installCRDs, Wait: waitTimeout, Subjects: restartTopologies})
}

// restartTechnicalIDPrefix starts the technical IDs of the seed's control planes.
const restartTechnicalIDPrefix = "shoot--restart--"

// restartTopologies are a seed provider, whose members are control planes of the host, and a
// garden provider, whose members are Shoots of a project reached through a front-proxy; both
// reach the fleet's member.
func restartTopologies(t *testing.T, f providertest.RestartFleet) []providertest.RestartSubject {
	// addControlPlane creates the control plane of shoot name: its namespace, Secret "gardener"
	// and Cluster object.
	addControlPlane := func(ctx context.Context, name string) (string, error) {
		kubeconfig, err := f.Member.ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{Name: name})
		if err != nil {
			return "", err
		}
		technicalID := restartTechnicalIDPrefix + name
		if err := f.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: technicalID}}); err != nil {
			return "", err
		}
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: technicalID, Name: gardener.SeedSecretName},
			Data:       map[string][]byte{gardener.SeedKubeconfigKey: kubeconfig},
		}
		if err := f.Client.Create(ctx, secret); err != nil {
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
		return technicalID, f.Client.Create(ctx, obj)
	}
	// The garden: Shoots of the fleet's namespace backed by the member, reached through a
	// front-proxy.
	minter, err := frontproxy.NewServiceAccountMinter(map[string]*rest.Config{f.Member.Host(): f.Member.Config()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(minter.Close)
	proxy, err := frontproxy.Start(frontproxy.Options{Garden: f.Host.Config(), Mint: minter.Mint})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	rules := providertest.MustManifestRules(t, "config/rbac-garden.yaml", "ClusterRole")
	identity, err := f.Host.ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{Name: "garden", ClusterRules: rules})
	if err != nil {
		t.Fatal(err)
	}
	gardenCfg, err := clientcmd.RESTConfigFromKubeConfig(identity)
	if err != nil {
		t.Fatal(err)
	}
	addShoot := func(ctx context.Context, name string) error {
		shoot := &gardencorev1beta1.Shoot{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: name},
			Spec:       gardencorev1beta1.ShootSpec{Region: "local", Provider: gardencorev1beta1.Provider{Type: "local"}},
		}
		if err := f.Client.Create(ctx, shoot); err != nil {
			return err
		}
		shoot.Status = usableStatus(f.Namespace, name, f.Member.Host())
		return f.Client.Status().Update(ctx, shoot)
	}
	return []providertest.RestartSubject{{
		New: func(o kit.Options) (providertest.Provider, error) {
			return gardener.New(f.Host.Config(), gardener.Options{Topology: gardener.TopologySeed, Options: o})
		},
		Add: func(ctx context.Context, name string) (multicluster.ClusterName, error) {
			technicalID, err := addControlPlane(ctx, name)
			return gardener.SeedClusterName(technicalID), err
		},
		Remove: func(ctx context.Context, name string) error {
			return f.Client.Delete(ctx, &extensionsv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: restartTechnicalIDPrefix + name}})
		},
	}, {
		New: func(o kit.Options) (providertest.Provider, error) {
			return gardener.New(proxy.ConfigFor(gardenCfg), gardener.Options{Namespaces: []string{f.Namespace}, Options: o})
		},
		Add: func(ctx context.Context, name string) (multicluster.ClusterName, error) {
			return gardener.ShootClusterName(f.Namespace, name), addShoot(ctx, name)
		},
		Remove: f.Delete(&gardencorev1beta1.Shoot{}),
	}}
}
