// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/conformance"
	"mcr.dev/conformance/internal/reference"
)

// Labels the suite puts on what it creates on existing clusters (see existing.go).
const (
	managedByLabel = "app.kubernetes.io/managed-by"
	runLabel       = "conformance.mcr.dev/run"
)

// writeKubeconfigs writes the admin kubeconfigs of s0 and s1 into one file, as contexts
// "east" and "west", and that of s2 into another, as its current context "north": the way
// kind clusters end up in a kubeconfig.
func writeKubeconfigs(t *testing.T) (both, north string) {
	t.Helper()
	dir := t.TempDir()
	merged := clientcmdapi.NewConfig()
	for context, member := range map[string]string{"east": "s0", "west": "s1"} {
		kc, err := clientcmd.Load(fleet.Member(member).Kubeconfig())
		if err != nil {
			t.Fatal(err)
		}
		merged.Clusters[context] = kc.Clusters[member]
		merged.AuthInfos[context] = kc.AuthInfos[member]
		merged.Contexts[context] = &clientcmdapi.Context{Cluster: context, AuthInfo: context}
	}
	merged.CurrentContext = "west"
	both, north = filepath.Join(dir, "kind.kubeconfig"), filepath.Join(dir, "north.kubeconfig")
	if err := clientcmd.WriteToFile(*merged, both); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(north, fleet.Member("s2").Kubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	return both, north
}

func adminOf(t *testing.T, member string) client.Client {
	t.Helper()
	c, err := client.New(fleet.Member(member).Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// suiteObjects lists what carries the suite's label on a cluster and is not being deleted:
// namespaces, ServiceAccounts and ClusterRoleBindings, as "kind/name".
func suiteObjects(ctx context.Context, t *testing.T, c client.Client) []string {
	t.Helper()
	var out []string
	ours := client.HasLabels{managedByLabel}
	var nss corev1.NamespaceList
	var sas corev1.ServiceAccountList
	var crbs rbacv1.ClusterRoleBindingList
	for _, l := range []client.ObjectList{&nss, &sas, &crbs} {
		if err := c.List(ctx, l, ours); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range nss.Items {
		if o.DeletionTimestamp == nil { // envtest runs no namespace controller to finish it
			out = append(out, "Namespace/"+o.Name)
		}
	}
	for _, o := range sas.Items {
		out = append(out, "ServiceAccount/"+o.Namespace+"/"+o.Name)
	}
	for _, o := range crbs.Items {
		out = append(out, "ClusterRoleBinding/"+o.Name)
	}
	return out
}

// TestFleetFromKubeconfigs runs the reference provider against clusters given only as
// kubeconfig files and contexts: the fleet helper's apiservers, which the Fleet reaches only
// through those files. The Fleet removes what an earlier, killed run left, and everything it
// created itself when it is closed.
func TestFleetFromKubeconfigs(t *testing.T) {
	ctx := t.Context()
	both, north := writeKubeconfigs(t)
	east := adminOf(t, "s0")

	// What a killed run left on one cluster.
	old := map[string]string{managedByLabel: "mcr-conformance", runLabel: "killed"}
	leftovers := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mcr-conformance-killed", Labels: old}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "m-1", Namespace: "mcr-conformance-killed", Labels: old}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "mcr-conformance-killed:m-1", Labels: old},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "m-1", Namespace: "mcr-conformance-killed"}}},
	}
	for _, o := range leftovers {
		if err := east.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	f, err := conformance.NewFleetFromKubeconfigs(ctx,
		conformance.KubeconfigCluster{Path: both, Context: "east"},
		conformance.KubeconfigCluster{Path: both, Context: "west"},
		conformance.KubeconfigCluster{Path: north},
	)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = f.Close(context.Background())
		}
	})
	if got := suiteObjects(ctx, t, east); len(got) != 0 {
		t.Errorf("the leftovers of the killed run are still there: %q", got)
	}

	o := selfTestOptions(conformance.ModeDirect, false)
	o.Only = []string{conformance.EngageOnAdd, conformance.EngagePreexisting, conformance.GetReturnsEngaged,
		conformance.IndexIsolation, conformance.DisengageOnDelete, conformance.ReengageOnCredentialRotation}
	results, _, err := conformance.RunTests(ctx, reference.NewHarness(f, reference.Faults{}), o, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, r := range results {
		if r.Result == conformance.Skipped || r.Result == conformance.NotSupported {
			continue
		}
		ran++
		if r.Result != conformance.Passed {
			t.Errorf("%s: %s: %s", r.ID, r.Result, r.Message)
		}
	}
	if ran != len(o.Only) {
		t.Errorf("%d tests ran, want %d", ran, len(o.Only))
	}

	// A member still there, with its credentials: Close must remove them too.
	m, err := f.Add(ctx, "last")
	if err != nil {
		t.Fatal(err)
	}
	if m.Server() != nil || m.ServerName() == "" {
		t.Errorf("member on an existing cluster: Server() = %v, ServerName() = %q; want nil and the context's name", m.Server(), m.ServerName())
	}
	if ns := m.Member("last").Namespace; !strings.HasPrefix(ns, "mcr-conformance-") {
		t.Errorf("the suite writes to namespace %q on an existing cluster, want the Fleet's own", ns)
	}
	closed = true
	if err := f.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, member := range []string{"s0", "s1", "s2"} {
		if got := suiteObjects(ctx, t, adminOf(t, member)); len(got) != 0 {
			t.Errorf("%s: after Close the suite's objects are still there: %q", member, got)
		}
	}
	// The ServiceAccount is gone, so its token no longer authenticates.
	revoked, err := client.New(m.Config(), client.Options{})
	if err == nil {
		err = revoked.List(ctx, &corev1.NamespaceList{})
	}
	if !apierrors.IsUnauthorized(err) {
		t.Errorf("listing with the last member's credentials after Close: %v, want unauthorized", err)
	}
}

// TestFleetFromKubeconfigsClosesWhenContextEnds: the Fleet removes what it created when the
// context it was made with ends, without a Close.
func TestFleetFromKubeconfigsClosesWhenContextEnds(t *testing.T) {
	_, north := writeKubeconfigs(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f, err := conformance.NewFleetFromKubeconfigs(ctx, conformance.KubeconfigCluster{Path: north})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Add(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	c := adminOf(t, "s2")
	if got := suiteObjects(t.Context(), t, c); len(got) == 0 {
		t.Fatal("the Fleet created nothing on the cluster")
	}
	cancel()
	// Wait for the cleanup the end of ctx started (bounded generously; nothing asserts speed).
	err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return len(suiteObjects(t.Context(), t, c)) == 0, nil
	})
	if err != nil {
		t.Errorf("the suite's objects are still there after ctx ended: %q", suiteObjects(t.Context(), t, c))
	}
}

// TestFleetFromKubeconfigsChecksUpFront: a user who is not a cluster admin, and a context that
// does not exist, are refused before anything is created, with one message naming each.
func TestFleetFromKubeconfigsChecksUpFront(t *testing.T) {
	ctx := t.Context()
	both, _ := writeKubeconfigs(t)
	c := adminOf(t, "s1")
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "not-an-admin", Namespace: "default"}}
	if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tr := &authenticationv1.TokenRequest{}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.LoadFromFile(both)
	if err != nil {
		t.Fatal(err)
	}
	kc.AuthInfos["weak"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["weak"] = &clientcmdapi.Context{Cluster: "west", AuthInfo: "weak"}
	weak := filepath.Join(t.TempDir(), "weak.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, weak); err != nil {
		t.Fatal(err)
	}
	before := suiteObjects(ctx, t, c)

	_, err = conformance.NewFleetFromKubeconfigs(ctx,
		conformance.KubeconfigCluster{Path: weak, Context: "weak"},
		conformance.KubeconfigCluster{Path: both, Context: "nowhere"},
	)
	if err == nil {
		t.Fatal("NewFleetFromKubeconfigs accepted a user who is not a cluster admin and a context that does not exist")
	}
	t.Log(err)
	for _, want := range []string{"context weak: the kubeconfig's user may not create namespaces", "bind clusterroles.rbac.authorization.k8s.io cluster-admin", "context nowhere"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q", want)
		}
	}
	if after := suiteObjects(ctx, t, c); len(after) != len(before) {
		t.Errorf("the refused Fleet created objects: %q, before %q", after, before)
	}
}
