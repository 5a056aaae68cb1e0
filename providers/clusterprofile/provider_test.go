// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterprofile"
)

func TestEngagesThroughTokenPlugin(t *testing.T) {
	ns := namespace(t)
	s := start(t, ns, clusterprofile.Options{})

	token := mustMemberToken(t, "east", ns+"-east")
	if err := writeTokenSecret(t.Context(), ns+"-east", token, ""); err != nil {
		t.Fatal(err)
	}
	status := readyStatus("east", ns+"-east", "")
	status.Properties = []v1alpha1.Property{
		{Name: clusterprofile.PropertyClusterID, Value: "3f1d8a9e-east"},
		{Name: clusterprofile.PropertyClusterSet, Value: "fleet-a"},
		{Name: "region.example.com", Value: "eu-1"},
	}
	mustCreateProfile(t, ns, "east", status)
	name := clusterprofile.ClusterName(ns, "east")

	e := s.WaitEngaged(t, name)
	s.requireReaches(t, name, "east")
	cfg := e.Cluster.GetConfig()
	// The kit runs the plugin: the engaged config has its transport, not client-go's exec
	// configuration.
	if cfg.ExecProvider != nil || cfg.Transport == nil {
		t.Fatalf("engaged cluster's exec provider = %v, transport %v, want the kit's transport only", cfg.ExecProvider, cfg.Transport)
	}
	if cfg.BearerToken != "" {
		t.Error("the engaged config carries a token; credentials must come from the plugin only")
	}
	waitEvent(t, ns, "east", kit.ReasonClusterEngaged, `access provider "mcr-token"`)

	id, err := s.provider.Identity(name)
	if err != nil {
		t.Fatalf("Identity: %v", err)
	}
	if want := (clusterprofile.Identity{ClusterID: "3f1d8a9e-east", ClusterSet: "fleet-a"}); id != want {
		t.Errorf("Identity = %+v, want %+v", id, want)
	}
	if err := id.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if _, err := s.provider.Identity(clusterprofile.ClusterName(ns, "nope")); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Errorf("Identity of an unknown cluster: %v, want ErrClusterNotFound", err)
	}
	if got := s.provider.ListClusters(); len(got) != 1 || got[0] != name {
		t.Errorf("ListClusters() = %v, want [%s]", got, name)
	}
	if s.logs.Contains(token) {
		t.Error("the token appears in the provider's logs")
	}
}

func TestEngagesOnlyWhenReady(t *testing.T) {
	ns := namespace(t)
	s := start(t, ns, clusterprofile.Options{})
	if err := writeTokenSecret(t.Context(), ns+"-p", mustMemberToken(t, "west", ns+"-p"), ""); err != nil {
		t.Fatal(err)
	}
	status := readyStatus("west", ns+"-p", "")
	status.Conditions = nil // no ControlPlaneHealthy yet
	mustCreateProfile(t, ns, "p", status)
	name := clusterprofile.ClusterName(ns, "p")
	s.WaitLogged(t, name, "Cluster not engaged: the ClusterProfile is not ready")
	if e, n := s.rec.Latest(name); e != nil || n != 0 {
		t.Fatalf("cluster %q engaged before its profile was healthy", name)
	}
	if _, err := s.provider.Get(t.Context(), name); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("Get before ready: %v, want ErrClusterNotFound", err)
	}

	mustUpdateStatus(t, client.ObjectKey{Namespace: ns, Name: "p"}, func(s *v1alpha1.ClusterProfileStatus) { healthy(s, true) })
	s.WaitEngaged(t, name)
	s.requireReaches(t, name, "west")
}

// TestStatusChangesDoNotReengageCredentialChangesDo is what multicluster-runtime v0.24.1 gets
// wrong: its access-provider strategy re-engages on every reconcile. Here changes of the
// profile that leave the endpoint and plugin alone are looked at and change nothing; a new
// token Secret reference, and a new server, re-engage at once.
func TestStatusChangesDoNotReengageCredentialChangesDo(t *testing.T) {
	ns := namespace(t)
	r := &providertest.Calls{}
	s := start(t, ns, clusterprofile.Options{IsReady: providertest.Counted(r, clusterprofile.ControlPlaneHealthy)})
	key := client.ObjectKey{Namespace: ns, Name: "p"}
	name := clusterprofile.ClusterName(ns, "p")

	if err := writeTokenSecret(t.Context(), ns+"-a", mustMemberToken(t, "east", ns+"-a"), ""); err != nil {
		t.Fatal(err)
	}
	mustCreateProfile(t, ns, "p", readyStatus("east", "p", ns+"-a"))
	first := s.WaitEngaged(t, name)

	changes := map[string]func(*v1alpha1.ClusterProfileStatus){
		"a Joined condition": func(s *v1alpha1.ClusterProfileStatus) {
			meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: clusterprofile.ConditionJoined, Status: metav1.ConditionTrue, Reason: "Joined"})
		},
		"the health condition's message": func(s *v1alpha1.ClusterProfileStatus) {
			meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: v1alpha1.ClusterConditionControlPlaneHealthy, Status: metav1.ConditionTrue, Reason: "Probe", Message: "probed again"})
		},
		"properties": func(s *v1alpha1.ClusterProfileStatus) {
			s.Properties = []v1alpha1.Property{
				{Name: clusterprofile.PropertyClusterID, Value: "id-p", LastObservedTime: metav1.Now()},
				{Name: clusterprofile.PropertyClusterSet, Value: "set-p", LastObservedTime: metav1.Now()},
			}
		},
		"the version": func(s *v1alpha1.ClusterProfileStatus) { s.Version.Kubernetes = "1.36.3" },
		"another access provider": func(s *v1alpha1.ClusterProfileStatus) {
			other := memberAccess("west", map[string]string{"clusterName": "p"})
			other.Name = "vendor-x"
			s.AccessProviders = append(s.AccessProviders, other)
		},
	}
	for what, change := range changes {
		before := r.Count("p")
		mustUpdateStatus(t, key, change)
		r.WaitMore(t, "p", before, waitTimeout)
		if n := s.rec.Count(name); n != 1 || !first.Alive() {
			t.Fatalf("after changing %s: engaged %d times (first alive: %t), want 1 engagement", what, n, first.Alive())
		}
	}
	before := r.Count("p")
	cp := &v1alpha1.ClusterProfile{}
	if err := hub.Get(t.Context(), key, cp); err != nil {
		t.Fatal(err)
	}
	cp.Labels["touched"] = "yes"
	cp.Spec.DisplayName = "P"
	if err := hub.Update(t.Context(), cp); err != nil {
		t.Fatal(err)
	}
	r.WaitMore(t, "p", before, waitTimeout)
	if n := s.rec.Count(name); n != 1 || !first.Alive() {
		t.Fatalf("after changing labels and spec: engaged %d times, want 1", n)
	}
	// The identity follows the properties without re-engaging.
	if id, err := s.provider.Identity(name); err != nil || id.ClusterID != "id-p" || id.ClusterSet != "set-p" {
		t.Errorf("Identity = %+v, %v; want the new properties", id, err)
	}

	// Credential change: the cluster manager points the profile at a new token Secret; the old
	// token is revoked and only the new engagement must keep working.
	if err := writeTokenSecret(t.Context(), ns+"-b", mustMemberToken(t, "east", ns+"-b"), ""); err != nil {
		t.Fatal(err)
	}
	mustUpdateStatus(t, key, func(s *v1alpha1.ClusterProfileStatus) {
		s.AccessProviders[0] = memberAccess("east", map[string]string{"clusterName": "p", "secretName": ns + "-b"})
	})
	second := s.rec.WaitReengaged(t, s.provider, name, first, waitTimeout)
	if err := revokeToken(t.Context(), "east", ns+"-a"); err != nil {
		t.Fatal(err)
	}
	s.requireReaches(t, name, "east")
	waitEvent(t, ns, "p", kit.ReasonCredentialsRotated)

	// Endpoint change: the profile now describes another cluster.
	if err := writeTokenSecret(t.Context(), ns+"-c", mustMemberToken(t, "west", ns+"-c"), ""); err != nil {
		t.Fatal(err)
	}
	mustUpdateStatus(t, key, func(s *v1alpha1.ClusterProfileStatus) {
		s.AccessProviders[0] = memberAccess("west", map[string]string{"clusterName": "p", "secretName": ns + "-c"})
	})
	s.rec.WaitReengaged(t, s.provider, name, second, waitTimeout)
	s.requireReaches(t, name, "west")
	if n := s.rec.Count(name); n != 3 {
		t.Errorf("engaged %d times, want 3 (initial and two credential changes)", n)
	}
}

// TestTokenRotationBehindThePlugin rotates the token in the Secret the plugin reads, without
// touching the profile, and revokes the old one: client-go runs the plugin again on the 401,
// so the engaged cluster keeps working and is not engaged again.
func TestTokenRotationBehindThePlugin(t *testing.T) {
	ns := namespace(t)
	s := start(t, ns, clusterprofile.Options{})
	name := clusterprofile.ClusterName(ns, "p")
	if err := writeTokenSecret(t.Context(), ns+"-tok", mustMemberToken(t, "north", ns+"-a"), ""); err != nil {
		t.Fatal(err)
	}
	mustCreateProfile(t, ns, "p", readyStatus("north", ns+"-tok", ""))
	e := s.WaitEngaged(t, name)

	if err := writeTokenSecret(t.Context(), ns+"-tok", mustMemberToken(t, "north", ns+"-b"), ""); err != nil {
		t.Fatal(err)
	}
	if err := revokeToken(t.Context(), "north", ns+"-a"); err != nil {
		t.Fatal(err)
	}
	var sawRefused bool
	eventually(t, "the engaged cluster works with the rotated token", func() error {
		var cms corev1.ConfigMapList
		err := e.Cluster.GetAPIReader().List(t.Context(), &cms, client.InNamespace("default"))
		if err != nil && strings.Contains(err.Error(), "Unauthorized") {
			sawRefused = true
		}
		return err
	})
	if !sawRefused {
		t.Log("the old token was refused before the first request; the plugin ran again on expiry")
	}
	if n := s.rec.Count(name); n != 1 || !e.Alive() {
		t.Errorf("engaged %d times (alive: %t), want the first engagement only", n, e.Alive())
	}
}

func TestBrokenProfilesDoNotStopOthers(t *testing.T) {
	ns := namespace(t)
	s := start(t, ns, clusterprofile.Options{})

	// No access provider of the file.
	unknown := readyStatus("east", ns+"-unknown", "")
	unknown.AccessProviders[0].Name = "vendor-x"
	mustCreateProfile(t, ns, "unknown", unknown)
	// The plugin fails: its token Secret does not exist.
	mustCreateProfile(t, ns, "nosecret", readyStatus("west", ns+"-missing", ""))
	// A working one.
	goodToken := mustMemberToken(t, "east", ns+"-good")
	if err := writeTokenSecret(t.Context(), ns+"-good", goodToken, ""); err != nil {
		t.Fatal(err)
	}
	mustCreateProfile(t, ns, "good", readyStatus("east", ns+"-good", ""))

	s.WaitEngaged(t, clusterprofile.ClusterName(ns, "good"))
	s.requireReaches(t, clusterprofile.ClusterName(ns, "good"), "east")
	waitEvent(t, ns, "unknown", clusterprofile.ReasonNoAccessProvider, `"vendor-x"`, `"mcr-token"`)
	waitEvent(t, ns, "nosecret", clusterprofile.ReasonCredentialPluginFailed, `access provider "mcr-token"`)
	s.WaitLogged(t, clusterprofile.ClusterName(ns, "unknown"), "Cluster cannot be engaged", `"reason"="NoAccessProvider"`)
	s.WaitLogged(t, clusterprofile.ClusterName(ns, "nosecret"), "Cluster cannot be engaged", `"reason"="CredentialPluginFailed"`)
	for _, n := range []string{"unknown", "nosecret"} {
		if _, err := s.provider.Get(t.Context(), clusterprofile.ClusterName(ns, n)); !errors.Is(err, multicluster.ErrClusterNotFound) {
			t.Errorf("Get(%s): %v, want ErrClusterNotFound", n, err)
		}
	}

	// The failing plugin is retried with backoff: once its Secret exists, the profile is engaged.
	westToken := mustMemberToken(t, "west", ns+"-west")
	if err := writeTokenSecret(t.Context(), ns+"-missing", westToken, ""); err != nil {
		t.Fatal(err)
	}
	s.WaitEngaged(t, clusterprofile.ClusterName(ns, "nosecret"))
	s.requireReaches(t, clusterprofile.ClusterName(ns, "nosecret"), "west")
	s.WaitLogged(t, clusterprofile.ClusterName(ns, "nosecret"), "Cluster problem resolved")
	for _, tok := range []string{goodToken, westToken} {
		if s.logs.Contains(tok) {
			t.Error("a token appears in the provider's logs")
		}
	}
}

// TestUnreadyGracePeriod runs two providers: with a long grace period an unready profile stays
// engaged and, ready again, is not engaged anew; with a short one it is disengaged and engaged
// again once ready.
func TestUnreadyGracePeriod(t *testing.T) {
	nsLong, nsShort := namespace(t), namespace(t)
	long := start(t, nsLong, clusterprofile.Options{UnreadyGracePeriod: time.Hour})
	short := start(t, nsShort, clusterprofile.Options{UnreadyGracePeriod: 100 * time.Millisecond})
	for _, ns := range []string{nsLong, nsShort} {
		if err := writeTokenSecret(t.Context(), ns+"-p", mustMemberToken(t, "east", ns+"-p"), ""); err != nil {
			t.Fatal(err)
		}
		mustCreateProfile(t, ns, "p", readyStatus("east", ns+"-p", ""))
	}
	longName, shortName := clusterprofile.ClusterName(nsLong, "p"), clusterprofile.ClusterName(nsShort, "p")
	eLong := long.WaitEngaged(t, longName)
	eShort := short.WaitEngaged(t, shortName)

	for _, ns := range []string{nsLong, nsShort} {
		mustUpdateStatus(t, client.ObjectKey{Namespace: ns, Name: "p"}, func(s *v1alpha1.ClusterProfileStatus) { healthy(s, false) })
	}
	waitEvent(t, nsShort, "p", clusterprofile.ReasonClusterUnready, "100ms")
	short.WaitDisengaged(t, shortName, eShort)
	waitEvent(t, nsShort, "p", kit.ReasonClusterDisengaged, "grace period")

	waitEvent(t, nsLong, "p", clusterprofile.ReasonClusterUnready, "1h0m0s")
	if !eLong.Alive() {
		t.Fatal("the cluster was disengaged within its grace period")
	}
	if _, err := long.provider.Get(t.Context(), longName); err != nil {
		t.Fatalf("Get within the grace period: %v", err)
	}

	for _, ns := range []string{nsLong, nsShort} {
		mustUpdateStatus(t, client.ObjectKey{Namespace: ns, Name: "p"}, func(s *v1alpha1.ClusterProfileStatus) { healthy(s, true) })
	}
	long.WaitLogged(t, longName, "ready again within the grace period")
	if n := long.rec.Count(longName); n != 1 || !eLong.Alive() {
		t.Errorf("long grace: engaged %d times (first alive: %t), want the first engagement only", n, eLong.Alive())
	}
	again := short.rec.WaitEngaged(t, short.provider, shortName, waitTimeout)
	if again == eShort || short.rec.Count(shortName) != 2 {
		t.Errorf("short grace: want a second engagement, got %d", short.rec.Count(shortName))
	}
	short.requireReaches(t, shortName, "east")
}

func TestDeletionAndDeselectionDisengage(t *testing.T) {
	ns := namespace(t)
	s := start(t, ns, clusterprofile.Options{Selector: labels.SelectorFromSet(labels.Set{v1alpha1.LabelClusterManagerKey: "test-manager"})})
	for _, n := range []string{"gone", "deselected"} {
		if err := writeTokenSecret(t.Context(), ns+"-"+n, mustMemberToken(t, "west", ns+"-"+n), ""); err != nil {
			t.Fatal(err)
		}
		mustCreateProfile(t, ns, n, readyStatus("west", ns+"-"+n, ""))
	}
	gone, deselected := clusterprofile.ClusterName(ns, "gone"), clusterprofile.ClusterName(ns, "deselected")
	eGone := s.WaitEngaged(t, gone)
	eDesel := s.WaitEngaged(t, deselected)

	if err := hub.Delete(t.Context(), &v1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gone"}}); err != nil {
		t.Fatal(err)
	}
	s.WaitDisengaged(t, gone, eGone)
	if _, err := s.provider.Identity(gone); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Errorf("Identity of a deleted profile: %v, want ErrClusterNotFound", err)
	}

	cp := &v1alpha1.ClusterProfile{}
	if err := hub.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "deselected"}, cp); err != nil {
		t.Fatal(err)
	}
	cp.Labels[v1alpha1.LabelClusterManagerKey] = "another-manager"
	if err := hub.Update(t.Context(), cp); err != nil {
		t.Fatal(err)
	}
	s.WaitDisengaged(t, deselected, eDesel)
	waitEvent(t, ns, "deselected", kit.ReasonClusterDisengaged, "not selected")
}

func TestDeprecatedCredentialProviders(t *testing.T) {
	ns := namespace(t)
	s := start(t, ns, clusterprofile.Options{})
	if err := writeTokenSecret(t.Context(), ns+"-p", mustMemberToken(t, "north", ns+"-p"), ""); err != nil {
		t.Fatal(err)
	}
	status := readyStatus("north", ns+"-p", "")
	status.CredentialProviders = status.AccessProviders
	other := memberAccess("east", map[string]string{"clusterName": "p"})
	other.Name = "vendor-x"
	status.AccessProviders = []v1alpha1.AccessProvider{other}
	mustCreateProfile(t, ns, "p", status)
	name := clusterprofile.ClusterName(ns, "p")
	s.WaitEngaged(t, name)
	s.requireReaches(t, name, "north")
	waitEvent(t, ns, "p", clusterprofile.ReasonDeprecatedCredentialProviders, "status.accessProviders")
}

// TestProfileSourcedEnvNeedsThePolicy gives a profile an additional-envs extension that makes
// the plugin read its token from another Secret key: ignored by default (the plugin finds no
// token under the default key), used with profileSourcedEnvVarsPolicy AppendIfNotExists and the
// variable in Policy.AllowExecEnv, refused (InvalidAccessProvider, before the plugin runs) with
// that policy alone.
// (additional-args cannot be tested this way: the ClusterProfile CRD of v0.1.2 only stores
// objects as extensions, and that extension is a string array.)
func TestProfileSourcedEnvNeedsThePolicy(t *testing.T) {
	nsIgnore, nsAppend, nsRefused := namespace(t), namespace(t), namespace(t)
	ignore := start(t, nsIgnore, clusterprofile.Options{})
	appendEnv := start(t, nsAppend, clusterprofile.Options{
		AccessProviders: accessConfig(t, `, "profileSourcedEnvVarsPolicy": "AppendIfNotExists"`),
		Options:         kit.Options{Policy: kubeconfig.Policy{AllowExecEnv: "CLUSTERPROFILE_TOKEN_KEY"}},
	})
	refused := start(t, nsRefused, clusterprofile.Options{AccessProviders: accessConfig(t, `, "profileSourcedEnvVarsPolicy": "AppendIfNotExists"`)})

	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: tokenNamespace, Name: nsIgnore + "-alt"},
		Data:       map[string][]byte{"alt": []byte(mustMemberToken(t, "east", nsIgnore+"-alt"))},
	}
	if err := hub.Create(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{nsIgnore, nsAppend, nsRefused} {
		var status v1alpha1.ClusterProfileStatus
		healthy(&status, true)
		status.AccessProviders = []v1alpha1.AccessProvider{memberAccess("east", map[string]string{"clusterName": nsIgnore + "-alt"},
			clientcmdv1.NamedExtension{Name: clusterprofile.AdditionalEnvsExtension, Extension: runtime.RawExtension{Raw: []byte(`{"CLUSTERPROFILE_TOKEN_KEY": "alt"}`)}})}
		mustCreateProfile(t, ns, "p", status)
	}
	appendEnv.WaitEngaged(t, clusterprofile.ClusterName(nsAppend, "p"))
	appendEnv.requireReaches(t, clusterprofile.ClusterName(nsAppend, "p"), "east")
	waitEvent(t, nsIgnore, "p", clusterprofile.ReasonCredentialPluginFailed)
	if e, _ := ignore.rec.Latest(clusterprofile.ClusterName(nsIgnore, "p")); e != nil {
		t.Error("profile-sourced env was used although the policy is Ignore")
	}
	waitEvent(t, nsRefused, "p", clusterprofile.ReasonInvalidAccessProvider, "CLUSTERPROFILE_TOKEN_KEY", "AllowExecEnv")
	if e, _ := refused.rec.Latest(clusterprofile.ClusterName(nsRefused, "p")); e != nil {
		t.Error("profile-sourced env outside Policy.AllowExecEnv was used")
	}
}

// TestPluginRefusesForeignServer: a token Secret bound to east's server is not handed to a
// profile that points at west.
func TestPluginRefusesForeignServer(t *testing.T) {
	ns := namespace(t)
	s := start(t, ns, clusterprofile.Options{})
	if err := writeTokenSecret(t.Context(), ns+"-bound", mustMemberToken(t, "east", ns+"-bound"), fleet.Member("east").Host()); err != nil {
		t.Fatal(err)
	}
	mustCreateProfile(t, ns, "east", readyStatus("east", ns+"-bound", ""))
	mustCreateProfile(t, ns, "foreign", readyStatus("west", ns+"-bound", ""))
	s.WaitEngaged(t, clusterprofile.ClusterName(ns, "east"))
	waitEvent(t, ns, "foreign", clusterprofile.ReasonCredentialPluginFailed)
	if e, _ := s.rec.Latest(clusterprofile.ClusterName(ns, "foreign")); e != nil {
		t.Error("a profile pointing at another server was engaged with a bound token")
	}
}
