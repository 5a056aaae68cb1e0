// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener_test

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/gardener"
)

// TestNewForHost runs the seed topology through a host cluster the caller runs, as a manager's
// local cluster would be shared: a shoot control plane is engaged, and when the provider's
// context ends Start returns without stopping the host, whose cache keeps following changes.
func TestNewForHost(t *testing.T) {
	ctx := t.Context()
	// The cache restriction docs/providers/gardener.md recommends for a shared seed host.
	hostCluster, err := cluster.New(fleet.Member("host").Config(), func(o *cluster.Options) {
		o.Scheme = scheme
		o.Cache.ByObject = map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Field: fields.OneTermEqualSelector("metadata.name", gardener.SeedSecretName)},
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	hostRun := providertest.RunInBackground(t, "host cluster", waitTimeout, hostCluster.Start)

	logs := &logBuffer{}
	p, err := gardener.NewForHost(hostCluster, gardener.Options{
		Topology:   gardener.TopologySeed,
		Namespaces: []string{"garden-forhost"},
		Options:    providertest.TestKitOptions(kit.Options{}, logs),
	})
	if err != nil {
		t.Fatalf("NewForHost: %v", err)
	}
	s := providertest.StartSession(t, p, logs, waitTimeout)
	r := &running{Session: s, provider: p, rec: s.Recorder, logs: logs}

	if err := writeSeedSecret(ctx, "shoot--forhost--one", memberToken(t, "west", "forhost-one"), nil); err != nil {
		t.Fatal(err)
	}
	clusterObj, err := seedCluster(ctx, "forhost", embeddedShoot("forhost", "one", nil))
	if err != nil {
		t.Fatal(err)
	}
	name := multiclusterName(clusterObj)
	e := r.WaitEngaged(t, name)
	r.requireReaches(t, name, "west")

	// Stop fails the test unless Start returns nil within waitTimeout.
	s.Stop()
	if e.Alive() {
		t.Error("the cluster is still engaged after Start returned")
	}
	select {
	case <-hostRun.Done():
		t.Fatalf("the host cluster stopped with the provider: %v", hostRun.Err())
	default:
	}
	// The caller's host still runs: its cache sees a change made after Start returned.
	if err := updateSeedShoot(ctx, clusterObj, func(s *gardencorev1beta1.Shoot) {
		s.Labels = map[string]string{"after": "stop"}
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the host's cache sees the change", func() error {
		obj := &extensionsv1alpha1.Cluster{}
		if err := hostCluster.GetCache().Get(ctx, client.ObjectKey{Name: clusterObj}, obj); err != nil {
			return err
		}
		shoot, err := gardener.ShootOfCluster(obj)
		if err != nil {
			return err
		}
		if shoot.Labels["after"] != "stop" {
			return errors.New("not yet")
		}
		return nil
	})
}

// TestNewForHostChecksScheme: NewForHost refuses a host whose scheme lacks the types of the
// topology, and says which and how to add them.
func TestNewForHostChecksScheme(t *testing.T) {
	if _, err := gardener.NewForHost(nil, gardener.Options{}); err == nil {
		t.Error("NewForHost(nil) succeeded")
	}
	// client-go's scheme only: no Gardener types.
	plain, err := cluster.New(fleet.Member("host").Config(), func(o *cluster.Options) { o.Scheme = clientgoscheme.Scheme })
	if err != nil {
		t.Fatal(err)
	}
	for topology, want := range map[gardener.Topology][]string{
		gardener.TopologyGarden: {"Shoot", "gardencorev1beta1.AddToScheme", "AdminKubeconfigRequest", "authenticationv1alpha1.AddToScheme"},
		gardener.TopologySeed:   {"Cluster", "extensionsv1alpha1.AddToScheme"},
	} {
		_, err := gardener.NewForHost(plain, gardener.Options{Topology: topology})
		if err == nil {
			t.Errorf("%s: NewForHost with client-go's scheme succeeded", topology)
			continue
		}
		if !containsAll(err.Error(), want...) {
			t.Errorf("%s: NewForHost error %q does not name %q", topology, err, want)
		}
		if topology == gardener.TopologySeed && strings.Contains(err.Error(), "Secret") {
			t.Errorf("seed: NewForHost error %q names Secrets, which client-go's scheme has", err)
		}
	}
	// The test scheme has Shoots and Cluster objects but no AdminKubeconfigRequest.
	withTypes, err := cluster.New(fleet.Member("host").Config(), func(o *cluster.Options) { o.Scheme = scheme })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gardener.NewForHost(withTypes, gardener.Options{Topology: gardener.TopologySeed}); err != nil {
		t.Errorf("seed: NewForHost with the Gardener types: %v", err)
	}
	if _, err := gardener.NewForHost(withTypes, gardener.Options{}); err == nil || !strings.Contains(err.Error(), "AdminKubeconfigRequest") {
		t.Errorf("garden: NewForHost without AdminKubeconfigRequest = %v, want an error naming it", err)
	}
	if _, err := gardener.NewForHost(withTypes, gardener.Options{Topology: gardener.TopologySeed, ExpirationSeconds: 60}); err == nil {
		t.Error("NewForHost accepted ExpirationSeconds below the minimum")
	}
}
