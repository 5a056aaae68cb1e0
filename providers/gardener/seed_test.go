// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/gardener"
)

// TestSeedFollowsTokenRenewal engages a shoot control plane of the seed, and checks that a
// renewed token in the Secret "gardener" engages it again, that metadata changes of the Secret
// and the Cluster object do not, that hibernation disengages it and waking up engages it again,
// and that deleting the Cluster object disengages it.
func TestSeedFollowsTokenRenewal(t *testing.T) {
	ctx := t.Context()
	u := &providertest.Calls{}
	r := startSeed(t, gardener.Options{IsReady: providertest.Counted(u, gardener.ShootAwake), Namespaces: []string{"garden-renewal"}})

	token := memberToken(t, "east", "renewal-one")
	if err := writeSeedSecret(ctx, "shoot--renewal--one", token, nil); err != nil {
		t.Fatal(err)
	}
	clusterObj, err := seedCluster(ctx, "renewal", embeddedShoot("renewal", "one", nil))
	if err != nil {
		t.Fatal(err)
	}
	name := gardener.SeedClusterName(clusterObj)
	if name != "shoot--renewal--one" {
		t.Fatalf("cluster name %q, want shoot--renewal--one", name)
	}
	first := r.WaitEngaged(t, name)
	r.requireReaches(t, name, "east")
	waitEvent(t, "Cluster", "", clusterObj, kit.ReasonClusterEngaged, "Secret shoot--renewal--one/gardener")

	// gardener-resource-manager marks the Secret, gardenlet labels the Cluster: no change of
	// credentials, no re-engage.
	before := u.Count("one")
	stamp := time.Now().UTC().Format(time.RFC3339)
	if err := writeSeedSecret(ctx, "shoot--renewal--one", token, map[string]string{
		"serviceaccount.resources.gardener.cloud/token-renew-timestamp": stamp,
	}); err != nil {
		t.Fatal(err)
	}
	if err := updateSeedShoot(ctx, clusterObj, func(s *gardencorev1beta1.Shoot) {
		s.Labels = map[string]string{"touched": "yes"}
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the provider looks at the Cluster again", func() error {
		if u.Count("one") < before+2 {
			return errors.New("not yet")
		}
		return nil
	})
	if !first.Alive() || r.rec.Count(name) != 1 {
		t.Fatalf("a metadata-only change of the Secret re-engaged the cluster (Engage called %d times)", r.rec.Count(name))
	}

	// A renewed token of the same ServiceAccount, as gardener-resource-manager writes it: the
	// engaged cluster takes it in place.
	renewed := memberToken(t, "east", "renewal-one")
	if err := writeSeedSecret(ctx, "shoot--renewal--one", renewed, nil); err != nil {
		t.Fatal(err)
	}
	r.rec.WaitRefreshedInPlace(t, r.logs, name, first, 1, waitTimeout)
	second := first
	renewedCfg, err := clientcmd.RESTConfigFromKubeConfig(renewed)
	if err != nil {
		t.Fatal(err)
	}
	if providertest.BearerTokenOf(t, second.Cluster.GetConfig()) != renewedCfg.BearerToken {
		t.Error("the engaged cluster does not send the renewed token")
	}
	r.requireReaches(t, name, "east")
	waitEvent(t, "Cluster", "", clusterObj, kit.ReasonCredentialsRotated)

	// Hibernation, as gardenlet writes it into the Cluster object.
	if err := updateSeedShoot(ctx, clusterObj, func(s *gardencorev1beta1.Shoot) {
		s.Spec.Hibernation = &gardencorev1beta1.Hibernation{Enabled: ptr.To(true)}
	}); err != nil {
		t.Fatal(err)
	}
	r.WaitDisengaged(t, name, second)
	if err := updateSeedShoot(ctx, clusterObj, func(s *gardencorev1beta1.Shoot) { s.Spec.Hibernation.Enabled = ptr.To(false) }); err != nil {
		t.Fatal(err)
	}
	third := r.rec.WaitReengaged(t, r.provider, name, second, waitTimeout)

	if err := host.Delete(ctx, &extensionsv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: clusterObj}}); err != nil {
		t.Fatal(err)
	}
	r.WaitDisengaged(t, name, third)
}

// TestSeedBrokenControlPlanesDoNotBlockOthers engages a healthy control plane next to one whose
// Secret has no token yet (waiting, no Warning), one whose kubeconfig runs an exec plugin
// (refused by the default policy), one without the Secret and one whose Cluster object does not
// embed a Shoot; and checks the Warnings and that the waiting one engages once its token comes.
func TestSeedBrokenControlPlanesDoNotBlockOthers(t *testing.T) {
	ctx := t.Context()
	r := startSeed(t, gardener.Options{Namespaces: []string{"garden-broken"}})

	// Token not yet written by gardener-resource-manager.
	pending := tokenless(t, "north")
	if err := writeSeedSecret(ctx, "shoot--broken--pending", pending, nil); err != nil {
		t.Fatal(err)
	}
	// An exec plugin.
	withExec := withUser(t, fleet.Member("west").Kubeconfig(), &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		Command: "steal-everything", APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}})
	if err := writeSeedSecret(ctx, "shoot--broken--exec", withExec, nil); err != nil {
		t.Fatal(err)
	}
	if err := writeSeedSecret(ctx, "shoot--broken--healthy", memberToken(t, "east", "broken-healthy"), nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"pending", "exec", "no-secret", "healthy"} {
		if _, err := seedCluster(ctx, "broken", embeddedShoot("broken", n, nil)); err != nil {
			t.Fatal(err)
		}
	}
	invalid := &extensionsv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "shoot--broken--invalid"},
		Spec: extensionsv1alpha1.ClusterSpec{
			CloudProfile: rawJSON(`{}`), Seed: rawJSON(`{}`), Shoot: rawJSON(`{"metadata": "not an object"}`),
		},
	}
	if err := host.Create(ctx, invalid); err != nil {
		t.Fatal(err)
	}

	healthy := gardener.SeedClusterName("shoot--broken--healthy")
	r.WaitEngaged(t, healthy)
	r.requireReaches(t, healthy, "east")

	note := waitEvent(t, "Cluster", "", "shoot--broken--exec", kit.ReasonInvalidKubeconfig, "AllowExec")
	if strings.Contains(note, "steal-everything") {
		t.Errorf("the Event quotes the kubeconfig: %s", note)
	}
	waitEvent(t, "Cluster", "", "shoot--broken--no-secret", gardener.ReasonKubeconfigSecretMissing, "shoot--broken--no-secret/gardener")
	waitEvent(t, "Cluster", "", "shoot--broken--invalid", gardener.ReasonInvalidCluster, "spec.shoot")
	r.WaitLogged(t, "shoot--broken--exec", "Cluster cannot be engaged", "ExecPlugin")
	r.WaitLogged(t, "shoot--broken--pending", "Waiting for the token in the kubeconfig")
	if notes, err := eventNotes(ctx, "Cluster", "", "shoot--broken--pending", kit.ReasonInvalidKubeconfig); err != nil || len(notes) > 0 {
		t.Errorf("a control plane waiting for its token got Warnings %q (%v)", notes, err)
	}

	// gardener-resource-manager writes the token.
	if err := writeSeedSecret(ctx, "shoot--broken--pending", memberToken(t, "north", "broken-pending"), nil); err != nil {
		t.Fatal(err)
	}
	r.WaitEngaged(t, "shoot--broken--pending")
	r.requireReaches(t, "shoot--broken--pending", "north")
}

// TestSeedSelection checks that Options.Namespaces and Options.Selector apply to the Shoot
// embedded in the Cluster object.
func TestSeedSelection(t *testing.T) {
	ctx := t.Context()
	r := startSeed(t, gardener.Options{
		Namespaces: []string{"garden-sel-a", "garden-sel-b"},
		Selector:   labels.SelectorFromSet(labels.Set{"tier": "prod"}),
	})
	for _, c := range []struct{ project, shoot, tier string }{
		{"sel-a", "in", "prod"}, {"sel-a", "dev", "dev"}, {"sel-c", "elsewhere", "prod"},
	} {
		if err := writeSeedSecret(ctx, "shoot--"+c.project+"--"+c.shoot, memberToken(t, "west", "sel-"+c.shoot), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := seedCluster(ctx, c.project, embeddedShoot(c.project, c.shoot, map[string]string{"tier": c.tier})); err != nil {
			t.Fatal(err)
		}
	}
	in := r.WaitEngaged(t, "shoot--sel-a--in")
	r.WaitLogged(t, "shoot--sel-a--dev", "Cluster not engaged: the Shoot is not selected")
	r.WaitLogged(t, "shoot--sel-c--elsewhere", "Cluster not engaged: the Shoot is not selected")
	if got := r.rec.Engaged(); len(got) != 1 {
		t.Errorf("engaged %v, want only shoot--sel-a--in", got)
	}
	// Relabeling the Shoot deselects it.
	if err := updateSeedShoot(ctx, "shoot--sel-a--in", func(s *gardencorev1beta1.Shoot) { s.Labels["tier"] = "dev" }); err != nil {
		t.Fatal(err)
	}
	r.WaitDisengaged(t, "shoot--sel-a--in", in)
}

// tokenless returns a kubeconfig of member whose user has no credentials: the Secret
// "gardener" before its token is written.
func tokenless(t *testing.T, member string) []byte {
	t.Helper()
	return withUser(t, fleet.Member(member).Kubeconfig(), &clientcmdapi.AuthInfo{Token: ""})
}

// withUser replaces the current user of a kubeconfig.
func withUser(t *testing.T, data []byte, user *clientcmdapi.AuthInfo) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo] = user
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rawJSON is an embedded object of a Cluster object.
func rawJSON(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }
