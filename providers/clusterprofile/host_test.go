// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterprofile"
)

// startHost builds a host cluster on the hub with the given scheme and runs it until the test
// ends, as a manager runs its local cluster.
func startHost(t *testing.T, s *runtime.Scheme) (cluster.Cluster, *providertest.Background) {
	t.Helper()
	host, err := cluster.New(fleet.Member("hub").Config(), func(o *cluster.Options) { o.Scheme = s })
	if err != nil {
		t.Fatal(err)
	}
	return host, providertest.RunInBackground(t, "host cluster", waitTimeout, host.Start)
}

// TestNewForHost runs the provider on a host cluster the test runs (a cache of every
// namespace): it engages the profile of its namespace through that cache, ignores a ready
// profile of another namespace, and when its context ends Start returns and disengages without
// stopping the host, whose cache keeps serving.
func TestNewForHost(t *testing.T) {
	ns, other := namespace(t), namespace(t)
	host, hostRun := startHost(t, scheme)

	if err := writeTokenSecret(t.Context(), ns+"-p", mustMemberToken(t, "north", ns+"-p"), ""); err != nil {
		t.Fatal(err)
	}
	mustCreateProfile(t, other, "decoy", readyStatus("north", ns+"-p", ""))
	mustCreateProfile(t, ns, "p", readyStatus("north", ns+"-p", ""))
	name := clusterprofile.ClusterName(ns, "p")

	r := &providertest.Calls{}
	logs := &logBuffer{}
	p, err := clusterprofile.NewForHost(host, clusterprofile.Options{
		AccessProviders: accessConfig(t, ""),
		Namespaces:      []string{ns},
		IsReady:         providertest.Counted(r, clusterprofile.ControlPlaneHealthy),
		Options:         providertest.TestKitOptions(kit.Options{}, logs),
	})
	if err != nil {
		t.Fatalf("NewForHost: %v", err)
	}
	s := runProvider(t, p, logs)
	e := s.WaitEngaged(t, name)
	s.requireReaches(t, name, "north")
	if n := r.Count("decoy"); n != 0 {
		t.Errorf("IsReady saw the profile of namespace %s %d times; Options.Namespaces is %s only", other, n, ns)
	}
	if got := p.ListClusters(); len(got) != 1 || got[0] != name {
		t.Errorf("ListClusters() = %v, want [%s]", got, name)
	}

	s.Stop() // fails the test unless Start returns nil in time
	if e.Alive() {
		t.Error("the engaged cluster's context is still alive after Start returned")
	}
	select {
	case <-hostRun.Done():
		t.Fatalf("the provider stopped the caller's host cluster (Start returned %v)", hostRun.Err())
	default:
	}
	// The host's informers still serve: a profile created now reaches its cache.
	mustCreateProfile(t, ns, "after", readyStatus("north", ns+"-p", ""))
	eventually(t, "host cache sees a profile created after the provider stopped", func() error {
		return host.GetCache().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "after"}, &v1alpha1.ClusterProfile{})
	})
}

// TestNewForHostRefuses checks what NewForHost refuses: no host, and a host whose scheme lacks
// a type the provider reads, with a message that says how to add it.
func TestNewForHostRefuses(t *testing.T) {
	opts := clusterprofile.Options{AccessProviders: accessConfig(t, "")}
	if _, err := clusterprofile.NewForHost(nil, opts); err == nil {
		t.Error("NewForHost(nil) succeeded")
	}
	if _, err := clusterprofile.NewForHost(newHost(t, clientgoscheme.AddToScheme), clusterprofile.Options{}); err == nil || !strings.Contains(err.Error(), "Options.AccessProviders") {
		t.Errorf("NewForHost without a strategy = %v, want the options error", err)
	}

	if _, err := clusterprofile.NewForHost(newHost(t, clientgoscheme.AddToScheme), opts); err == nil || !strings.Contains(err.Error(), "v1alpha1.AddToScheme") {
		t.Errorf("NewForHost with a scheme without ClusterProfile = %v, want an error naming v1alpha1.AddToScheme", err)
	}

	withSecret := opts
	withSecret.Secret = &clusterprofile.SecretStrategy{ConsumerName: "c"}
	onlyProfiles := newHost(t, v1alpha1.AddToScheme)
	if _, err := clusterprofile.NewForHost(onlyProfiles, opts); err != nil {
		t.Errorf("NewForHost with ClusterProfiles in the scheme and no Secret strategy: %v", err)
	}
	if _, err := clusterprofile.NewForHost(onlyProfiles, withSecret); err == nil || !strings.Contains(err.Error(), "Secret") {
		t.Errorf("NewForHost with the Secret strategy and a scheme without Secrets = %v, want an error naming Secret", err)
	}
	if _, err := clusterprofile.NewForHost(newHost(t, clientgoscheme.AddToScheme, v1alpha1.AddToScheme), withSecret); err != nil {
		t.Errorf("NewForHost with a complete scheme: %v", err)
	}
}

// newHost builds, without starting it, a host cluster on the hub whose scheme has only the
// given types.
func newHost(t *testing.T, adds ...func(*runtime.Scheme) error) cluster.Cluster {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range adds {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	host, err := cluster.New(fleet.Member("hub").Config(), func(o *cluster.Options) { o.Scheme = s })
	if err != nil {
		t.Fatal(err)
	}
	return host
}
