// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/conformance"
	"mcr.dev/conformance/mcrproviders"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterprofile"
)

// placedNamespace holds the ClusterProfiles and PlacementDecisions of the placement conformance
// members.
const placedNamespace = "conformance-placed"

// placedDecisionKey is the decision the placement-scoped provider follows; its members are
// spread over placedSlices slices.
const (
	placedDecisionKey = "conformance"
	placedSlices      = 2
)

// placedHarness is the KubeconfigHarness of the placement-scoped ClusterProfile provider: a
// member is a ClusterProfile (as for TestConformance) that one of the decision's slices
// references. Writing a member creates or updates its profile and adds it to its slice;
// deleting it removes it from the slice, the way a scheduler takes a cluster out of a
// placement, and deletes the profile. SetReady flips the ControlPlaneHealthy condition.
type placedHarness struct {
	*conformance.KubeconfigHarness
}

var _ conformance.ReadinessToggler = placedHarness{}

func (placedHarness) SetReady(ctx context.Context, m conformance.Member, ready bool) error {
	return updateStatus(ctx, client.ObjectKey{Namespace: placedNamespace, Name: m.ID}, func(s *v1alpha1.ClusterProfileStatus) {
		healthy(s, ready)
	})
}

// sliceWrites serializes the harness's read-modify-write of the slices, which the Scale test
// changes for dozens of members at once.
var sliceWrites sync.Mutex

// sliceOf returns the slice that references the member name.
func sliceOf(name string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return fmt.Sprintf("%s-%d", placedDecisionKey, h.Sum32()%placedSlices)
}

// placeMember adds (or, with place false, removes) the member's reference to its slice.
func placeMember(ctx context.Context, name string, place bool) error {
	sliceWrites.Lock()
	defer sliceWrites.Unlock()
	key := client.ObjectKey{Namespace: placedNamespace, Name: sliceOf(name)}
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		pd := &v1alpha1.PlacementDecision{}
		err := hub.Get(ctx, key, pd)
		if apierrors.IsNotFound(err) {
			if !place {
				return nil
			}
			pd = &v1alpha1.PlacementDecision{
				ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{v1alpha1.DecisionKeyLabel: placedDecisionKey}},
				Decisions:  []v1alpha1.ClusterDecision{{ClusterProfileRef: v1alpha1.ClusterProfileReference{Name: name}}},
			}
			return hub.Create(ctx, pd)
		} else if err != nil {
			return err
		}
		at := slices.IndexFunc(pd.Decisions, func(d v1alpha1.ClusterDecision) bool { return d.ClusterProfileRef.Name == name })
		switch {
		case place && at < 0:
			pd.Decisions = append(pd.Decisions, v1alpha1.ClusterDecision{ClusterProfileRef: v1alpha1.ClusterProfileReference{Name: name}})
		case !place && at >= 0:
			pd.Decisions = slices.Delete(pd.Decisions, at, at+1)
		default:
			return nil
		}
		return hub.Update(ctx, pd)
	})
}

// writePlacedMember stores the token of kubeconfig in a Secret named after the token's hash,
// creates the member's ClusterProfile or points it at the new Secret, and places it.
func writePlacedMember(ctx context.Context, name string, kubeconfig []byte) error {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return err
	}
	if cfg.BearerToken == "" {
		return errors.New("the member's kubeconfig has no token")
	}
	sum := sha256.Sum256([]byte(cfg.BearerToken))
	secretName := "placed-" + name + "-" + hex.EncodeToString(sum[:4])
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: tokenNamespace, Name: secretName, Labels: map[string]string{memberLabel: "placed-" + name}},
		Data:       map[string][]byte{"token": []byte(cfg.BearerToken), "server": []byte(cfg.Host)},
	}
	if err := hub.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	ap := accessFor(cfg.Host, cfg.CAData, map[string]string{"clusterName": name, "secretName": secretName})
	key := client.ObjectKey{Namespace: placedNamespace, Name: name}
	if err := hub.Get(ctx, key, &v1alpha1.ClusterProfile{}); apierrors.IsNotFound(err) {
		status := v1alpha1.ClusterProfileStatus{AccessProviders: []v1alpha1.AccessProvider{ap}}
		healthy(&status, true)
		if err := createProfile(ctx, placedNamespace, name, status); err != nil {
			return err
		}
	} else if err != nil {
		return err
	} else if err := updateStatus(ctx, key, func(s *v1alpha1.ClusterProfileStatus) { s.AccessProviders = []v1alpha1.AccessProvider{ap} }); err != nil {
		return err
	}
	return placeMember(ctx, name, true)
}

// placementConformanceChild is set in the child process that runs TestPlacementConformance.
const placementConformanceChild = "MCR_CLUSTERPROFILE_PLACEMENT_CONFORMANCE_CHILD"

// runPlacementConformanceChild runs TestPlacementConformance in a child process of the test
// binary (with a fleet of its own, from TestMain): Ginkgo runs one suite per process, and
// TestConformance runs the other.
func runPlacementConformanceChild(t *testing.T) {
	args := []string{"-test.run=^TestPlacementConformance$", "-test.v"}
	if deadline, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout="+time.Until(deadline).Round(time.Second).String())
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Env = append(os.Environ(), placementConformanceChild+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the placement conformance run failed: %v; its output:\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "Core: ") || strings.HasPrefix(line, "| ") {
			t.Log(line)
		}
	}
}

// TestPlacementConformance runs the mcr conformance suite against the provider scoped to one
// decision (Options.Placement) split over two slices: members are engaged because the
// decision references them and disengaged because it stops doing so. It claims what
// TestConformance claims.
func TestPlacementConformance(t *testing.T) {
	if os.Getenv(placementConformanceChild) == "" {
		runPlacementConformanceChild(t)
		return
	}
	requirePlacementCRD(t)
	if err := hub.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: placedNamespace}}); err != nil {
		t.Fatal(err)
	}
	providers := accessConfig(t, "")
	providerLogs := &providertest.LogBuffer{}
	hubConfig, hubLink := mcrproviders.LinkHost(t, fleet.Member("hub"))
	harness := placedHarness{&conformance.KubeconfigHarness{
		Fleet: conformance.NewFleet(fleet.Member("east"), fleet.Member("west"), fleet.Member("north")),
		Provider: func(context.Context) (multicluster.Provider, error) {
			return clusterprofile.New(hubConfig, clusterprofile.Options{
				AccessProviders:    providers,
				Namespaces:         []string{placedNamespace},
				Placement:          &clusterprofile.Placement{Namespace: placedNamespace, DecisionKey: placedDecisionKey},
				UnreadyGracePeriod: 200 * time.Millisecond,
				Options:            kit.Options{RetryMaxDelay: time.Second, Logger: providerLogs.Logger(), ResyncPeriod: mcrproviders.Resync},
			})
		},
		Write: writePlacedMember,
		Delete: func(ctx context.Context, name string) error {
			if err := placeMember(ctx, name, false); err != nil {
				return err
			}
			err := hub.Delete(ctx, &v1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: placedNamespace, Name: name}})
			if client.IgnoreNotFound(err) != nil {
				return err
			}
			return hub.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(tokenNamespace), client.MatchingLabels{memberLabel: "placed-" + name})
		},
		ProviderReports: mcrproviders.Reports(providerLogs.Lines, hub, placedNamespace),
		SourceOutage:    mcrproviders.Outage(hubLink),
		Resync:          mcrproviders.Resync,
		// A change that is not a change of the member: a label of its profile, and its slice
		// rewritten with the same references and a new scheduler name.
		Update: func(ctx context.Context, name string) error {
			cp := &v1alpha1.ClusterProfile{}
			if err := hub.Get(ctx, client.ObjectKey{Namespace: placedNamespace, Name: name}, cp); err != nil {
				return err
			}
			cp.Labels["conformance.mcr.dev/touched"] = time.Now().Format("150405.000000")
			if err := hub.Update(ctx, cp); err != nil {
				return err
			}
			sliceWrites.Lock()
			defer sliceWrites.Unlock()
			return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
				pd := &v1alpha1.PlacementDecision{}
				if err := hub.Get(ctx, client.ObjectKey{Namespace: placedNamespace, Name: sliceOf(name)}, pd); err != nil {
					return err
				}
				pd.SchedulerName = "conformance-" + time.Now().Format("150405.000000")
				return hub.Update(ctx, pd)
			})
		},
		ClusterName: func(name string) multicluster.ClusterName {
			return clusterprofile.ClusterName(placedNamespace, name)
		},
	}}

	conformance.Run(t, harness, mcrproviders.Options("clusterprofile (Options.Placement)"))
}
