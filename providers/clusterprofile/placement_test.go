// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	mcbuilder "mcr.dev/core/builder"
	"mcr.dev/core/envtest"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/multi"
	"mcr.dev/core/providers/providertest"
	mcreconcile "mcr.dev/core/reconcile"
	"mcr.dev/providers/clusterprofile"
)

// installPlacementCRD installs, once per test binary, the PlacementDecision CRD shipped in the
// cluster-inventory-api module the provider is built with.
var installPlacementCRD = sync.OnceValue(func() error {
	ctx := context.Background()
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-inventory-api").Output()
	if err != nil {
		return fmt.Errorf("locating sigs.k8s.io/cluster-inventory-api: %w", err)
	}
	file := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "bases", "multicluster.x-k8s.io_placementdecisions.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		return fmt.Errorf("decoding %s: %w", file, err)
	}
	c, err := client.New(fleet.Member("hub").Config(), client.Options{})
	if err != nil {
		return err
	}
	return envtest.InstallCRDs(ctx, c, crd)
})

func requirePlacementCRD(t *testing.T) {
	t.Helper()
	if err := installPlacementCRD(); err != nil {
		t.Fatalf("installing the PlacementDecision CRD: %v", err)
	}
}

// placedProfile creates a ready ClusterProfile ns/name reaching member through the token plugin.
func placedProfile(t *testing.T, ns, name, member string) {
	t.Helper()
	secret := ns + "-" + name
	if err := writeTokenSecret(t.Context(), secret, mustMemberToken(t, member, secret), ""); err != nil {
		t.Fatal(err)
	}
	mustCreateProfile(t, ns, name, readyStatus(member, secret, ""))
}

// writeSlice creates or replaces the PlacementDecision slice ns/name with the decision and
// placement keys (when not empty) and references to the profiles of ns named in profiles.
func writeSlice(ctx context.Context, ns, name, decisionKey, placementKey string, profiles ...string) error {
	labels := map[string]string{}
	if decisionKey != "" {
		labels[v1alpha1.DecisionKeyLabel] = decisionKey
	}
	if placementKey != "" {
		labels[v1alpha1.PlacementKeyLabel] = placementKey
	}
	decisions := []v1alpha1.ClusterDecision{}
	for _, p := range profiles {
		decisions = append(decisions, v1alpha1.ClusterDecision{ClusterProfileRef: v1alpha1.ClusterProfileReference{Name: p}, Reason: "test"})
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pd := &v1alpha1.PlacementDecision{}
		err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pd)
		if apierrors.IsNotFound(err) {
			pd = &v1alpha1.PlacementDecision{
				ObjectMeta:    metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
				Decisions:     decisions,
				SchedulerName: "test",
			}
			return hub.Create(ctx, pd)
		} else if err != nil {
			return err
		}
		pd.Labels, pd.Decisions = labels, decisions
		return hub.Update(ctx, pd)
	})
}

func mustWriteSlice(t *testing.T, ns, name, decisionKey, placementKey string, profiles ...string) {
	t.Helper()
	if err := writeSlice(t.Context(), ns, name, decisionKey, placementKey, profiles...); err != nil {
		t.Fatalf("writing PlacementDecision %s/%s: %v", ns, name, err)
	}
}

// waitSliceEvent waits for an Event of reason on the PlacementDecision ns/name whose note
// contains part.
func waitSliceEvent(t *testing.T, ns, name, reason, part string) {
	t.Helper()
	eventually(t, fmt.Sprintf("Event %s on PlacementDecision %s/%s", reason, ns, name), func() error {
		var list eventsv1.EventList
		if err := hub.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		var notes []string
		for _, e := range list.Items {
			if e.Regarding.Kind != "PlacementDecision" || e.Regarding.Name != name || e.Reason != reason {
				continue
			}
			if strings.Contains(e.Note, part) {
				return nil
			}
			notes = append(notes, e.Note)
		}
		return fmt.Errorf("no matching Event; notes of reason %s: %q", reason, notes)
	})
}

// waitListed waits until the provider has synced every key of its first list.
func waitListed(t *testing.T, p multicluster.StatusReporter) {
	t.Helper()
	eventually(t, "the provider's first list synced", func() error {
		if !p.FleetStatus().Listed {
			return errors.New("not listed yet")
		}
		return nil
	})
}

// requireClusters fails unless the provider has engaged exactly want.
func requireClusters(t *testing.T, p *clusterprofile.Provider, want ...multicluster.ClusterName) {
	t.Helper()
	got := p.ListClusters()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("engaged clusters = %v, want %v", got, want)
	}
}

// A placement-scoped provider engages exactly the profiles its decision's slices reference, as
// the scheduler changes them: a profile added to a slice (the decision's second slice
// included) is engaged, one removed is disengaged, a deleted slice is reported and its
// profiles disengaged; slices of another decision and profiles no slice references are never
// engaged.
func TestPlacementFollowsDecisions(t *testing.T) {
	requirePlacementCRD(t)
	ns := namespace(t)
	placedProfile(t, ns, "a", "east")
	placedProfile(t, ns, "b", "west")
	placedProfile(t, ns, "c", "north")
	placedProfile(t, ns, "idle", "north")
	mustWriteSlice(t, ns, "web-0", "web", "", "a")
	// Another decision's slice: its profile is not this provider's.
	mustWriteSlice(t, ns, "batch-0", "batch", "", "c")

	s := start(t, ns, clusterprofile.Options{Placement: &clusterprofile.Placement{Namespace: ns, DecisionKey: "web"}})
	a, b, c := clusterprofile.ClusterName(ns, "a"), clusterprofile.ClusterName(ns, "b"), clusterprofile.ClusterName(ns, "c")
	eA := s.WaitEngaged(t, a)
	s.requireReaches(t, a, "east")
	waitListed(t, s.provider)
	requireClusters(t, s.provider, a)

	// The decision grows a second slice.
	mustWriteSlice(t, ns, "web-1", "web", "", "b")
	eB := s.WaitEngaged(t, b)
	s.requireReaches(t, b, "west")

	// The scheduler drops a from the first slice.
	mustWriteSlice(t, ns, "web-0", "web", "")
	s.WaitDisengaged(t, a, eA)
	waitEvent(t, ns, "a", "ClusterDisengaged", "no selected PlacementDecision references the ClusterProfile")

	// The second slice goes: reported, and its profile disengaged.
	removed := testutil.ToFloat64(clusterprofile.PlacementDecisionsRemoved)
	if err := hub.Delete(t.Context(), &v1alpha1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1"}}); err != nil {
		t.Fatal(err)
	}
	s.WaitDisengaged(t, b, eB)
	waitSliceEvent(t, ns, "web-1", clusterprofile.ReasonPlacementDecisionRemoved, "the 1 ClusterProfiles it referenced")
	if got := testutil.ToFloat64(clusterprofile.PlacementDecisionsRemoved); got <= removed {
		t.Errorf("PlacementDecisionsRemoved = %v after a slice was deleted, want more than %v", got, removed)
	}

	// a moves back, now in the decision's second slice: engaged again.
	mustWriteSlice(t, ns, "web-1", "web", "", "a")
	s.WaitEngaged(t, a)
	requireClusters(t, s.provider, a)
	if s.rec.Count(c) != 0 {
		t.Errorf("cluster %s of another decision was engaged", c)
	}
}

// A slice that references a ClusterProfile that does not exist is reported (a Warning Event on
// the slice, the Errors metric, the provider's FleetStatus) and the rest of the decision is
// engaged; once the profile appears it is engaged, and the report is gone.
func TestPlacementReportsUnknownProfiles(t *testing.T) {
	requirePlacementCRD(t)
	ns := namespace(t)
	placedProfile(t, ns, "known", "east")
	mustWriteSlice(t, ns, "web-0", "", "web-app", "known", "ghost")

	before := testutil.ToFloat64(clusterprofile.Errors.WithLabelValues(clusterprofile.ReasonUnknownClusterProfile))
	s := start(t, ns, clusterprofile.Options{Placement: &clusterprofile.Placement{PlacementKey: "web-app"}})
	known, ghost := clusterprofile.ClusterName(ns, "known"), clusterprofile.ClusterName(ns, "ghost")
	s.WaitEngaged(t, known)
	waitSliceEvent(t, ns, "web-0", clusterprofile.ReasonUnknownClusterProfile, "ClusterProfile "+ns+"/ghost, which does not exist")
	eventually(t, "the unknown profile listed as failing", func() error {
		if msg, ok := s.provider.FleetStatus().Failing[ghost]; !ok || !strings.Contains(msg, "does not exist") {
			return fmt.Errorf("FleetStatus().Failing = %v", s.provider.FleetStatus().Failing)
		}
		return nil
	})
	if got := testutil.ToFloat64(clusterprofile.Errors.WithLabelValues(clusterprofile.ReasonUnknownClusterProfile)); got <= before {
		t.Errorf("Errors{reason=%s} = %v, want more than %v", clusterprofile.ReasonUnknownClusterProfile, got, before)
	}

	placedProfile(t, ns, "ghost", "west")
	s.WaitEngaged(t, ghost)
	s.requireReaches(t, ghost, "west")
	if failing := s.provider.FleetStatus().Failing; len(failing) != 0 {
		t.Errorf("FleetStatus().Failing = %v once the profile exists, want none", failing)
	}
}

// The options of a placement are checked by New.
func TestPlacementOptionsValidated(t *testing.T) {
	_, err := clusterprofile.New(fleet.Member("hub").Config(), clusterprofile.Options{
		AccessProviders: accessConfig(t, ""),
		Placement:       &clusterprofile.Placement{DecisionKey: "not a label value"},
	})
	if err == nil || !strings.Contains(err.Error(), "Options.Placement") {
		t.Fatalf("New with an invalid decision key: %v, want an Options.Placement error", err)
	}
}

// Several placements in one manager: one provider per placement, composed by the multi
// provider under a prefix each. A controller reconciles in the clusters of both; a profile
// placed by both is served under both names, and each provider follows its own decision.
func TestPlacementsInOneManager(t *testing.T) {
	requirePlacementCRD(t)
	ns := namespace(t)
	placedProfile(t, ns, "a", "east")
	placedProfile(t, ns, "b", "west")
	mustWriteSlice(t, ns, "web", "web", "", "a", "b")
	mustWriteSlice(t, ns, "batch", "batch", "", "b")

	fleetProvider := multi.New(multi.Options{})
	for _, key := range []string{"web", "batch"} {
		p, err := clusterprofile.New(fleet.Member("hub").Config(), clusterprofile.Options{
			AccessProviders: accessConfig(t, ""),
			Namespaces:      []string{ns},
			Placement:       &clusterprofile.Placement{Namespace: ns, DecisionKey: key},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := fleetProvider.AddProvider(key, p); err != nil {
			t.Fatal(err)
		}
	}
	skipNameValidation := true
	mgr, err := mcmanager.New(fleet.Member("hub").Config(), fleetProvider, mcmanager.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: &skipNameValidation},
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[multicluster.ClusterName]bool{}
	if err := mcbuilder.ControllerManagedBy(mgr).Named("placed").For(&corev1.Namespace{}).Complete(mcreconcile.Func(
		func(_ context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			seen[req.ClusterName] = true
			return reconcile.Result{}, nil
		})); err != nil {
		t.Fatal(err)
	}
	providertest.RunInBackground(t, "manager", waitTimeout, mgr.Start)

	reconciled := func(names ...multicluster.ClusterName) func() error {
		return func() error {
			mu.Lock()
			defer mu.Unlock()
			for _, n := range names {
				if !seen[n] {
					return fmt.Errorf("no reconcile in %s yet; seen %v", n, seen)
				}
			}
			return nil
		}
	}
	prefixed := func(prefix, profile string) multicluster.ClusterName {
		return multicluster.ClusterName(prefix + multi.DefaultSeparator + string(clusterprofile.ClusterName(ns, profile)))
	}
	eventually(t, "reconciles in every placed cluster", reconciled(prefixed("web", "a"), prefixed("web", "b"), prefixed("batch", "b")))

	// The batch placement moves to a; the web placement is unchanged.
	mustWriteSlice(t, ns, "batch", "batch", "", "a")
	eventually(t, "reconciles in the moved placement", reconciled(prefixed("batch", "a")))
	eventually(t, "the batch placement drops b", func() error {
		if _, err := fleetProvider.Get(t.Context(), prefixed("batch", "b")); !errors.Is(err, multicluster.ErrClusterNotFound) {
			return fmt.Errorf("Get(batch b) = %v, want ErrClusterNotFound", err)
		}
		return nil
	})
	for _, n := range []multicluster.ClusterName{prefixed("web", "a"), prefixed("web", "b")} {
		if _, err := fleetProvider.Get(t.Context(), n); err != nil {
			t.Errorf("Get(%s) = %v: the web placement lost a cluster the batch placement moved", n, err)
		}
	}
}
