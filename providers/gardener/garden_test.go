// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"mcr.dev/core/providers/kit"
	"mcr.dev/providers/gardener"
	"mcr.dev/providers/gardener/internal/frontproxy"
)

// issuedFor returns the kubeconfigs proxy issued for the Shoot key.
func issuedFor(proxy *frontproxy.Server, key client.ObjectKey) []frontproxy.Issuance {
	var out []frontproxy.Issuance
	for _, i := range proxy.Issued() {
		if i.Namespace == key.Namespace && i.Name == key.Name {
			out = append(out, i)
		}
	}
	return out
}

// TestGardenEngagesUsableShoots follows a Shoot through creation, hibernation, wake-up, an API
// server outage and deletion, and checks that it is engaged exactly while ShootUsable holds,
// with one adminkubeconfig request per engagement.
func TestGardenEngagesUsableShoots(t *testing.T) {
	ns := newNamespace(t, "garden-life")
	proxy := startProxy(t, 0)
	r := startGarden(t, proxy, ns, gardener.Options{})
	name := gardener.ShootClusterName(ns, "life")
	key := client.ObjectKey{Namespace: ns, Name: "life"}

	// Created, not yet reconciled by gardenlet: no last operation.
	newShoot(t, ns, "life", nil)
	r.WaitLogged(t, name, "Cluster not engaged: the Shoot has no last operation yet")
	mustUpdateShoot(t, key, true, func(s *gardencorev1beta1.Shoot) {
		s.Status = usableStatus(ns, "life", fleet.Member("east").Host())
		s.Status.LastOperation.State = gardencorev1beta1.LastOperationStateProcessing
	})
	r.WaitLogged(t, name, "Cluster not engaged: the Shoot's creation has not succeeded (last operation Create, state Processing)")
	if got := r.rec.Engaged(); len(got) != 0 {
		t.Fatalf("engaged %v before the Shoot was created", got)
	}

	mustUpdateShoot(t, key, true, func(s *gardencorev1beta1.Shoot) {
		s.Status.LastOperation.State = gardencorev1beta1.LastOperationStateSucceeded
	})
	first := r.WaitEngaged(t, name)
	r.requireReaches(t, name, "east")
	waitEvent(t, "Shoot", ns, "life", kit.ReasonClusterEngaged, "adminkubeconfig")
	if n := len(issuedFor(proxy, key)); n != 1 {
		t.Errorf("%d adminkubeconfig requests for one engagement, want 1", n)
	}

	// Hibernation disengages at once, waking up engages with fresh credentials.
	mustUpdateShoot(t, key, false, func(s *gardencorev1beta1.Shoot) {
		s.Spec.Hibernation = &gardencorev1beta1.Hibernation{Enabled: ptr.To(true)}
	})
	r.WaitDisengaged(t, name, first)
	waitEvent(t, "Shoot", ns, "life", kit.ReasonClusterDisengaged, "hibernat")
	mustUpdateShoot(t, key, false, func(s *gardencorev1beta1.Shoot) {
		s.Spec.Hibernation.Enabled = ptr.To(false)
	})
	second := r.rec.WaitReengaged(t, r.provider, name, first, waitTimeout)
	r.requireReaches(t, name, "east")
	if n := len(issuedFor(proxy, key)); n != 2 {
		t.Errorf("%d adminkubeconfig requests for two engagements, want 2", n)
	}

	// An API server gardener reports unavailable is disengaged; Progressing is not.
	if err := setAPIServerAvailable(t.Context(), key, gardencorev1beta1.ConditionProgressing); err != nil {
		t.Fatal(err)
	}
	if err := setAPIServerAvailable(t.Context(), key, gardencorev1beta1.ConditionFalse); err != nil {
		t.Fatal(err)
	}
	r.WaitDisengaged(t, name, second)
	if got := r.rec.Count(name); got != 2 {
		t.Errorf("Engage called %d times, want 2 (Progressing must not re-engage)", got)
	}
	if err := setAPIServerAvailable(t.Context(), key, gardencorev1beta1.ConditionTrue); err != nil {
		t.Fatal(err)
	}
	third := r.rec.WaitReengaged(t, r.provider, name, second, waitTimeout)

	if err := host.Delete(t.Context(), &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
		t.Fatal(err)
	}
	r.WaitDisengaged(t, name, third)
	r.WaitLogged(t, name, "Disengaged cluster: the Shoot is gone")
}

// TestGardenRenewsCredentialsBeforeExpiry has the front-proxy issue admin credentials that
// expire after 20 seconds (and are revoked then) and checks that the provider fetches new ones
// before the old ones expire, engages the cluster again with them, and keeps working once the
// old ones are dead.
func TestGardenRenewsCredentialsBeforeExpiry(t *testing.T) {
	ns := newNamespace(t, "garden-renew")
	proxy := startProxy(t, 20*time.Second)
	r := startGarden(t, proxy, ns, gardener.Options{RefreshFraction: 0.5})
	key := usableShoot(t, ns, "renew", "west")
	name := gardener.ShootClusterName(ns, "renew")

	first := r.WaitEngaged(t, name)
	r.requireReaches(t, name, "west")
	issued := issuedFor(proxy, key)
	if len(issued) != 1 {
		t.Fatalf("%d adminkubeconfig requests before the first engagement, want 1", len(issued))
	}
	firstExpiry := issued[0].Expires
	if life := firstExpiry.Sub(issued[0].Issued); life > 21*time.Second {
		t.Fatalf("the front-proxy issued credentials for %s, want them capped to 20s", life)
	}

	r.rec.WaitReengaged(t, r.provider, name, first, 2*waitTimeout)
	issued = issuedFor(proxy, key)
	if len(issued) < 2 {
		t.Fatalf("re-engaged without new credentials (%d requests)", len(issued))
	}
	if !issued[1].Issued.Before(firstExpiry) {
		t.Errorf("new credentials requested at %s, after the old ones expired at %s", issued[1].Issued.Format(time.RFC3339Nano), firstExpiry.Format(time.RFC3339Nano))
	}
	waitEvent(t, "Shoot", ns, "renew", kit.ReasonCredentialsRotated)

	// The old credentials really die at their expiry, and the engaged cluster keeps working.
	eventually(t, "the first credentials stop working", func() error {
		err := first.Cluster.GetAPIReader().List(t.Context(), &corev1.ConfigMapList{}, client.InNamespace("default"))
		if err == nil {
			return errors.New("the first credentials still work")
		}
		if !apierrors.IsUnauthorized(err) {
			return fmt.Errorf("the first credentials fail with %v, want Unauthorized", err)
		}
		return nil
	})
	if !time.Now().After(firstExpiry) {
		t.Errorf("the first credentials stopped working before their expiry")
	}
	r.requireReaches(t, name, "west")
	if latest, _ := r.rec.Latest(name); latest == nil || !latest.Alive() || latest.Cluster == first.Cluster {
		t.Errorf("no live engagement of %q with new credentials after the first ones expired", name)
	}

}

// TestGardenDisengagesWhenCredentialsExpire has the front-proxy issue admin credentials that
// expire after 20 seconds, then refuse new ones (the Shoot lost its advertised address): the
// cluster stays engaged while its credentials live, and is disengaged with a CredentialsExpired
// Warning once they expire.
func TestGardenDisengagesWhenCredentialsExpire(t *testing.T) {
	ns := newNamespace(t, "garden-expire")
	proxy := startProxy(t, 20*time.Second)
	r := startGarden(t, proxy, ns, gardener.Options{})
	key := usableShoot(t, ns, "expire", "north")
	name := gardener.ShootClusterName(ns, "expire")
	e := r.WaitEngaged(t, name)
	// The provider knows the expiry as the API gives it, to the second.
	expires := issuedFor(proxy, key)[0].Expires.Truncate(time.Second)

	// The epoch changes, so the provider asks for new credentials at once, and is refused.
	mustUpdateShoot(t, key, true, func(s *gardencorev1beta1.Shoot) { s.Status.AdvertisedAddresses = nil })
	waitEvent(t, "Shoot", ns, key.Name, gardener.ReasonAdminKubeconfigFailed, "no suitable advertised address")
	if !e.Alive() && time.Now().Before(expires) {
		t.Fatal("disengaged although the engaged credentials have not expired")
	}
	r.WaitDisengaged(t, name, e)
	if time.Now().Before(expires) {
		t.Errorf("disengaged before the credentials expired at %s", expires.Format(time.RFC3339Nano))
	}
	waitEvent(t, "Shoot", ns, key.Name, gardener.ReasonCredentialsExpired, "expired")
}

// TestGardenBrokenShootsDoNotBlockOthers engages a healthy Shoot next to one the
// adminkubeconfig subresource refuses (no advertised address) and one whose API server does not
// answer: each broken one gets a Warning Event and an error log naming it, and no credentials
// reach the logs.
func TestGardenBrokenShootsDoNotBlockOthers(t *testing.T) {
	ns := newNamespace(t, "garden-broken")
	proxy := startProxy(t, 0)
	r := startGarden(t, proxy, ns, gardener.Options{Options: kit.Options{CacheSyncTimeout: 5 * time.Second}})

	noAddress := client.ObjectKey{Namespace: ns, Name: "no-address"}
	newShoot(t, ns, noAddress.Name, nil)
	mustUpdateShoot(t, noAddress, true, func(s *gardencorev1beta1.Shoot) { s.Status = usableStatus(ns, noAddress.Name, "") })
	down := client.ObjectKey{Namespace: ns, Name: "down"}
	newShoot(t, ns, down.Name, nil)
	mustUpdateShoot(t, down, true, func(s *gardencorev1beta1.Shoot) { s.Status = usableStatus(ns, down.Name, unreachableURL) })
	usableShoot(t, ns, "healthy", "north")

	healthy := gardener.ShootClusterName(ns, "healthy")
	r.WaitEngaged(t, healthy)
	r.requireReaches(t, healthy, "north")

	waitEvent(t, "Shoot", ns, noAddress.Name, gardener.ReasonAdminKubeconfigFailed, "no suitable advertised address")
	// The note names the address dialed, not the URL: the kit's access check never repeats a
	// member's URL.
	waitEvent(t, "Shoot", ns, down.Name, kit.ReasonClusterUnreachable, strings.TrimPrefix(unreachableURL, "https://"))
	r.WaitLogged(t, gardener.ShootClusterName(ns, noAddress.Name), "Cluster cannot be engaged", gardener.ReasonAdminKubeconfigFailed)
	r.WaitLogged(t, gardener.ShootClusterName(ns, down.Name), "Cluster cannot be engaged", kit.ReasonClusterUnreachable)
	if got := testutil.ToFloat64(gardener.BrokenClusters); got < 2 {
		t.Errorf("mcr_gardener_provider_broken_clusters = %v, want at least 2", got)
	}
	for _, n := range []string{noAddress.Name, down.Name} {
		if _, err := r.provider.Get(t.Context(), gardener.ShootClusterName(ns, n)); err == nil {
			t.Errorf("broken Shoot %s is engaged", n)
		}
	}
	for _, l := range r.logs.Lines() {
		// Service account tokens are JWTs; none may be logged.
		if strings.Contains(l, "eyJ") {
			t.Errorf("a log line contains a token: %.200s", l)
		}
	}
}

// TestGardenOptions checks that New refuses options Gardener or the provider cannot honor.
func TestGardenOptions(t *testing.T) {
	cfg := fleet.Member("host").Config()
	for _, tc := range []struct {
		name string
		opts gardener.Options
		want string
	}{
		{"short expiration", gardener.Options{ExpirationSeconds: 599}, "Gardener refuses less than 600"},
		{"fraction 1", gardener.Options{RefreshFraction: 1}, "RefreshFraction"},
		{"negative fraction", gardener.Options{RefreshFraction: -0.1}, "RefreshFraction"},
		{"unknown topology", gardener.Options{Topology: "shoot"}, `unknown Topology "shoot"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gardener.New(cfg, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := gardener.New(nil, gardener.Options{}); err == nil {
		t.Error("New(nil config) succeeded")
	}
	p, err := gardener.New(cfg, gardener.Options{ExpirationSeconds: 600, RefreshFraction: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	if p.Topology() != gardener.TopologyGarden {
		t.Errorf("default topology %q, want %q", p.Topology(), gardener.TopologyGarden)
	}
}
