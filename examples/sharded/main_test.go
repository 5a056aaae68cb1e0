// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/sharding"
	"mcr.dev/examples/internal/exampletest"
)

var fleet *envtest.Fleet

// The members are the clusters of the fleet; "a" is also the host that holds the Leases.
var members = []string{"a", "b", "c", "d"}

func TestMain(m *testing.M) {
	exampletest.RunChild(run)
	os.Exit(exampletest.Main(m, &fleet, members...))
}

const (
	group          = "sharded.examples.mcr.dev"
	leaseNamespace = "mcr-sharding"
)

// Three replicas, each a process of its own as in a Deployment, share a fleet of four clusters:
// every cluster is marked by exactly the replica that rendezvous hashing over the three live
// replicas names, which also holds the cluster's Lease. When one replica stops, the two others
// take its clusters over and mark them.
func TestShardedReplicasShareTheFleet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fleet")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	clients := map[multicluster.ClusterName]client.Client{}
	for _, m := range members {
		exampletest.WriteKubeconfig(t, dir, m+".kubeconfig", fleet.Member(m))
		c := exampletest.Client(t, fleet.Member(m).Config())
		exampletest.SeedMarked(t, c, "demo", "hello")
		clients[multicluster.ClusterName(m+".kubeconfig+"+m)] = c
	}
	host := exampletest.Client(t, fleet.Member("a").Config())
	if err := host.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leaseNamespace}}); err != nil {
		t.Fatal(err)
	}
	hostKubeconfig := exampletest.WriteKubeconfig(t, t.TempDir(), "host.kubeconfig", fleet.Member("a"))

	ids := []string{"replica-1", "replica-2", "replica-3"}
	// With these identities each replica owns at least one of the four clusters (rendezvous
	// hashing is deterministic), and replica-1 owns two: it is the one stopped below.
	owned := map[string]int{}
	for name := range clients {
		owner, _ := sharding.Owner(name, peersOf(ids...))
		owned[owner.ID]++
	}
	if len(owned) != len(ids) || owned["replica-1"] < 2 {
		t.Fatalf("fixture: clusters per replica %v, want every replica to own one and replica-1 two", owned)
	}

	replicas := map[string]*exampletest.Program{}
	for _, id := range ids {
		replicas[id] = exampletest.StartChild(t,
			"-kubeconfig", hostKubeconfig, "-fleet", dir+"/", "-replica-id", id, "-namespace", leaseNamespace,
			"-lease-duration", "6s", "-renew-interval", "1s",
			"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-zap-log-level", "error",
		)
	}
	watcher := replicas["replica-2"] // Eventually fails at once if this one ends early
	watcher.Eventually(t, "every cluster marked by its owner among the three replicas", ownedBy(host, clients, ids...))

	// A graceful stop (SIGTERM, as on a rollout) hands replica-1's clusters over to the others.
	replicas["replica-1"].Stop(t)
	survivors := ids[1:]
	watcher.Eventually(t, "replica-1's clusters marked by the survivors", ownedBy(host, clients, survivors...))
	for name := range clients {
		if before, _ := sharding.Owner(name, peersOf(ids...)); before.ID == "replica-1" {
			after, _ := sharding.Owner(name, peersOf(survivors...))
			t.Logf("cluster %s moved from replica-1 to %s", name, after.ID)
		}
	}

	for _, id := range survivors {
		replicas[id].Stop(t)
	}
}

// ownedBy returns a condition for Eventually: exactly the given replicas are live members of
// the group, and every cluster's ConfigMap is marked with its name by the replica that owns the
// cluster among them, which is also the holder of the cluster's Lease.
func ownedBy(host client.Client, clients map[multicluster.ClusterName]client.Client, replicas ...string) func(context.Context) error {
	peers := peersOf(replicas...)
	return func(ctx context.Context) error {
		var leases coordinationv1.LeaseList
		if err := host.List(ctx, &leases, client.InNamespace(leaseNamespace), client.MatchingLabels{sharding.LabelRole: sharding.RoleMember}); err != nil {
			return err
		}
		var live []string
		for _, l := range leases.Items {
			if ptr.Deref(l.Spec.HolderIdentity, "") != "" {
				live = append(live, l.Annotations[sharding.AnnotationIdentity])
			}
		}
		slices.Sort(live)
		if !slices.Equal(live, replicas) {
			return fmt.Errorf("live replicas %v, want %v", live, replicas)
		}
		var errs []error
		for name, c := range clients {
			owner, _ := sharding.Owner(name, peers)
			if err := exampletest.MarkedBy(c, "demo", "hello", string(name))(ctx); err != nil {
				errs = append(errs, err)
				continue
			}
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "hello"}, cm); err != nil {
				errs = append(errs, err)
				continue
			}
			if got := cm.Annotations[replicaAnnotation]; got != owner.ID {
				errs = append(errs, fmt.Errorf("cluster %s marked by %q, want its owner %q", name, got, owner.ID))
			}
			lease := &coordinationv1.Lease{}
			if err := host.Get(ctx, client.ObjectKey{Namespace: leaseNamespace, Name: sharding.ClusterLeaseName(group, name)}, lease); err != nil {
				errs = append(errs, fmt.Errorf("the Lease of cluster %s: %w", name, err))
			} else if got := ptr.Deref(lease.Spec.HolderIdentity, ""); got != owner.ID {
				errs = append(errs, fmt.Errorf("the Lease of cluster %s is held by %q, want %q", name, got, owner.ID))
			}
		}
		return errors.Join(errs...)
	}
}

// peersOf returns the replicas as sharding peers of weight 1, the example's default.
func peersOf(ids ...string) []sharding.Peer {
	var peers []sharding.Peer
	for _, id := range ids {
		peers = append(peers, sharding.Peer{ID: id, Weight: 1})
	}
	return peers
}
