// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package webhook_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/webhook"
)

// The acceptance test: one validating webhook, registered in three members, rejects a
// ConfigMap according to the policy of the member it came from, read through that member's
// cluster object. Member c is engaged as "team/c", a name whose "/" must survive the way from
// the webhook configuration through the API server to the webhook server. A mutating webhook of
// the same configuration stamps each object with its cluster.
func TestValidatingWebhookReadsTheMemberItCameFrom(t *testing.T) {
	names := map[string]multicluster.ClusterName{"a": "a", "b": "b", "c": "team/c"}
	members := []*member{directClient(t, "a"), directClient(t, "b"), directClient(t, "c")}
	ns := testNamespace(t, members...)
	createPolicy(t, members[0], ns, "red")
	createPolicy(t, members[1], ns, "blue")
	// No policy in c.

	mgr := newManager(t, memberProvider(t, names))
	validator, err := webhook.ManagedBy(mgr, &corev1.ConfigMap{}).WithValidator(colorPolicy{}).Complete()
	if err != nil {
		t.Fatal(err)
	}
	defaulter, err := webhook.ManagedBy(mgr, &corev1.ConfigMap{}).WithDefaulter(clusterStamp{}).Complete()
	if err != nil {
		t.Fatal(err)
	}
	if validator.Path() != "/validate--v1-configmap" || defaulter.Path() != "/mutate--v1-configmap" {
		t.Fatalf("paths %s and %s, want the type's default paths", validator.Path(), defaulter.Path())
	}
	mgr.start(t)
	waitForClusters(t, validator, "a", "b", "team/c")
	waitForClusters(t, defaulter, "a", "b", "team/c")

	cfg := webhook.Configuration{
		Name:       "colors-" + ns,
		Endpoint:   webhook.Endpoint{URL: mgr.endpoint.URL(), CABundle: mgr.endpoint.CABundle},
		Validating: []webhook.ValidatingHook{validating(validator, ns)},
		Mutating: []webhook.MutatingHook{{Webhook: defaulter, MutatingWebhook: admissionregistrationv1.MutatingWebhook{
			Name:              "stamp.webhook.mcr.dev",
			Rules:             configMapRules(),
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{testLabel: ns}},
			FailurePolicy:     ptr.To(admissionregistrationv1.Fail),
		}}},
	}
	for _, m := range members {
		apply(t, cfg, m, names[m.name])
	}
	for _, m := range members {
		// The probe is routed to the member's own cluster by both webhooks.
		want := `probe seen by cluster ` + string(names[m.name]) + `, defaulted in "` + string(names[m.name]) + `"`
		waitForDenial(t, m, ns, want)
	}

	// The same two ConfigMaps in every member: each member's own policy decides.
	for _, tc := range []struct {
		member int
		color  string
		deny   string // the denial's message, or "" when allowed
		warn   string // the warning of an allowed request
	}{
		{0, "red", "color red is forbidden in cluster a", ""},
		{0, "blue", "", "checked in cluster a"},
		{1, "red", "", "checked in cluster b"},
		{1, "blue", "color blue is forbidden in cluster b", ""},
		{2, "red", "", "no policy in cluster team/c"},
		{2, "blue", "", "no policy in cluster team/c"},
	} {
		m := members[tc.member]
		m.warnings.take()
		err := createConfigMap(t.Context(), m, ns, tc.color, nil, map[string]string{"color": tc.color})
		switch {
		case tc.deny != "" && !denied(err, tc.deny):
			t.Errorf("%s in %s: %v, want denied with %q", tc.color, m.name, err, tc.deny)
		case tc.deny == "" && err != nil:
			t.Errorf("%s in %s: %v, want allowed", tc.color, m.name, err)
		case tc.deny == "" && !slices.Contains(m.warnings.take(), tc.warn):
			t.Errorf("%s in %s: allowed without the warning %q", tc.color, m.name, tc.warn)
		}
	}

	// Updates are validated too; the defaulter stamped each object with its own cluster.
	for _, m := range members {
		cm := &corev1.ConfigMap{}
		if err := m.client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "blue"}, cm); err != nil {
			if m.name == "b" {
				continue // denied above
			}
			t.Fatal(err)
		}
		if got := cm.Annotations["mcr.dev/admitted-in"]; got != string(names[m.name]) {
			t.Errorf("ConfigMap blue in %s was defaulted for cluster %q", m.name, got)
		}
		cm.Data["color"] = "red"
		err := m.client.Update(t.Context(), cm)
		if wantDenied := m.name == "a"; wantDenied != denied(err, "color red is forbidden in cluster a") {
			t.Errorf("updating blue to red in %s: %v (want denied: %v)", m.name, err, wantDenied)
		}
	}
}

// Per-cluster paths follow the engagements: a member removed from the fleet is refused at its
// path (Deny, the default), served again once it is back; the others are served throughout.
func TestPerClusterPathsFollowEngagement(t *testing.T) {
	a, c := directClient(t, "a"), directClient(t, "c")
	ns := testNamespace(t, a, c)
	provider := memberProvider(t, map[string]multicluster.ClusterName{"a": "a", "c": "c"})
	mgr := newManager(t, provider)
	w, err := webhook.ManagedBy(mgr, &corev1.ConfigMap{}).WithValidator(colorPolicy{}).Complete()
	if err != nil {
		t.Fatal(err)
	}
	mgr.start(t)
	waitForClusters(t, w, "a", "c")
	cfg := webhook.Configuration{
		Name:       "follow-" + ns,
		Endpoint:   webhook.Endpoint{URL: mgr.endpoint.URL(), CABundle: mgr.endpoint.CABundle},
		Validating: []webhook.ValidatingHook{validating(w, ns)},
	}
	apply(t, cfg, a, "a")
	apply(t, cfg, c, "c")
	waitForDenial(t, c, ns, "probe seen by cluster c")

	provider.Remove("c")
	waitForClusters(t, w, "a")
	waitForDenial(t, c, ns, `cluster "c" is not served by webhook /validate--v1-configmap`)
	waitForDenial(t, a, ns, "probe seen by cluster a")

	if err := provider.Add(t.Context(), "c", memberCluster(t, "c")); err != nil {
		t.Fatal(err)
	}
	waitForClusters(t, w, "a", "c")
	waitForDenial(t, c, ns, "probe seen by cluster c")
}

// With AllowUnknownCluster, a request for a cluster the webhook does not serve is allowed
// without checks, and the client is told so.
func TestUnknownClusterAllowed(t *testing.T) {
	b := directClient(t, "b")
	ns := testNamespace(t, b)
	createPolicy(t, b, ns, "red")
	mgr := newManager(t, memberProvider(t, map[string]multicluster.ClusterName{"b": "b"}))
	w, err := webhook.ManagedBy(mgr, &corev1.ConfigMap{}).
		WithValidator(colorPolicy{}).
		WithOptions(webhook.Options{Path: "/advisory", UnknownCluster: webhook.AllowUnknownCluster}).
		Complete()
	if err != nil {
		t.Fatal(err)
	}
	mgr.start(t)
	waitForClusters(t, w, "b")
	cfg := webhook.Configuration{
		Name:       "advisory-" + ns,
		Endpoint:   webhook.Endpoint{URL: mgr.endpoint.URL(), CABundle: mgr.endpoint.CABundle},
		Validating: []webhook.ValidatingHook{validating(w, ns)},
	}
	// Member b calls the path of a cluster the fleet does not have.
	apply(t, cfg, b, "ghost")
	const warning = `cluster "ghost" is not served by webhook /advisory`
	testcheck.WaitFor(t, "the unknown cluster's request to be allowed with a warning", func() bool {
		b.warnings.take()
		name := fmt.Sprintf("red-%d", rand.Uint32())
		if err := createConfigMap(t.Context(), b, ns, name, nil, map[string]string{"color": "red"}); err != nil {
			t.Fatalf("red in b, sent to the ghost cluster's path: %v, want allowed", err)
		}
		for _, w := range b.warnings.take() {
			if strings.Contains(w, warning) && strings.Contains(w, "allowed without checks") {
				return true
			}
		}
		return false // the configuration is not in effect yet
	})
}

// On kcp every workspace calls one path, and the cluster comes from the request: here each
// member would be a workspace, and member a's API server stands in for kcp, with the
// kcp.io/cluster annotation on the object naming the cluster whose policy applies.
func TestKCPResolverRoutesByAnnotation(t *testing.T) {
	members := []*member{directClient(t, "a"), directClient(t, "b"), directClient(t, "c")}
	ns := testNamespace(t, members...)
	createPolicy(t, members[0], ns, "red")
	createPolicy(t, members[1], ns, "blue")
	mgr := newManager(t, memberProvider(t, map[string]multicluster.ClusterName{"a": "a", "b": "b", "c": "c"}))
	w, err := webhook.ManagedBy(mgr, &corev1.ConfigMap{}).
		WithValidator(colorPolicy{}).
		WithOptions(webhook.Options{Path: "/kcp/validate-configmaps", ClusterResolver: webhook.KCPClusterResolver}).
		Complete()
	if err != nil {
		t.Fatal(err)
	}
	mgr.start(t)
	waitForClusters(t, w, "a", "b", "c")
	cfg := webhook.Configuration{
		Name:       "kcp-" + ns,
		Endpoint:   webhook.Endpoint{URL: mgr.endpoint.URL(), CABundle: mgr.endpoint.CABundle},
		Validating: []webhook.ValidatingHook{validating(w, ns)},
	}
	a := members[0]
	apply(t, cfg, a, "a")
	if got, _ := cfg.RenderValidating("b"); *got.Webhooks[0].ClientConfig.URL != mgr.endpoint.URL()+"/kcp/validate-configmaps" {
		t.Fatalf("with a resolver every cluster calls the webhook's one path, got %s", *got.Webhooks[0].ClientConfig.URL)
	}
	probeDenial(t, a, ns, map[string]string{webhook.KCPClusterAnnotation: "c"})

	for _, tc := range []struct {
		cluster string // the annotation, "" for none
		color   string
		deny    string
	}{
		{"b", "blue", "color blue is forbidden in cluster b"},
		{"c", "blue", ""},
		{"a", "red", "color red is forbidden in cluster a"},
		{"b", "red", ""},
		{"", "green", "cannot tell the cluster of the request: ConfigMap " + ns + "/green has no kcp.io/cluster annotation"},
		{"ghost", "green", `cluster "ghost" is not served by webhook /kcp/validate-configmaps`},
	} {
		var annotations map[string]string
		if tc.cluster != "" {
			annotations = map[string]string{webhook.KCPClusterAnnotation: tc.cluster}
		}
		name := tc.color + "-in-" + tc.cluster
		if tc.cluster == "" {
			name = tc.color
		}
		err := createConfigMap(t.Context(), a, ns, name, annotations, map[string]string{"color": tc.color})
		if tc.deny == "" && err != nil || tc.deny != "" && !denied(err, tc.deny) {
			t.Errorf("%s for cluster %q: %v, want denial %q", tc.color, tc.cluster, err, tc.deny)
		}
	}
}

// Apply is server-side apply: applying the same configuration again writes nothing, a changed
// one updates the object (hooks dropped from the Configuration are dropped from it), and Remove
// is idempotent.
func TestConfigurationApplyIsIdempotent(t *testing.T) {
	b := directClient(t, "b")
	w, err := webhook.New(admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		return admission.Allowed("")
	}), webhook.Options{Path: "/validate"})
	if err != nil {
		t.Fatal(err)
	}
	hook := func(name string) webhook.ValidatingHook {
		return webhook.ValidatingHook{Webhook: w, ValidatingWebhook: admissionregistrationv1.ValidatingWebhook{
			Name:  name,
			Rules: configMapRules(),
			// No namespace has this label: the configuration never calls the (absent) server.
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{testLabel: "none"}},
			FailurePolicy:     ptr.To(admissionregistrationv1.Ignore),
		}}
	}
	cfg := webhook.Configuration{
		Name:       fmt.Sprintf("idempotent-%d", rand.Uint32()),
		Labels:     map[string]string{"app.kubernetes.io/managed-by": "mcr"},
		Endpoint:   webhook.Endpoint{URL: "https://127.0.0.1:1/hooks/", CABundle: []byte("not used")},
		Validating: []webhook.ValidatingHook{hook("one.webhook.mcr.dev"), hook("two.webhook.mcr.dev")},
	}
	get := func() *admissionregistrationv1.ValidatingWebhookConfiguration {
		t.Helper()
		obj := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := b.client.Get(t.Context(), client.ObjectKey{Name: cfg.Name}, obj); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	if err := cfg.Apply(t.Context(), "team/b", b.client); err != nil {
		t.Fatal(err)
	}
	first := get()
	if len(first.Webhooks) != 2 || *first.Webhooks[0].ClientConfig.URL != "https://127.0.0.1:1/hooks/validate/team~2Fb" ||
		first.Labels["app.kubernetes.io/managed-by"] != "mcr" {
		t.Fatalf("applied %+v", first)
	}
	if err := cfg.Apply(t.Context(), "team/b", b.client); err != nil {
		t.Fatal(err)
	}
	if again := get(); again.ResourceVersion != first.ResourceVersion {
		t.Errorf("applying the same configuration again wrote it: resourceVersion %s, then %s", first.ResourceVersion, again.ResourceVersion)
	}

	cfg.Validating = cfg.Validating[:1]
	cfg.Validating[0].FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	if err := cfg.Apply(t.Context(), "team/b", b.client); err != nil {
		t.Fatal(err)
	}
	if changed := get(); len(changed.Webhooks) != 1 || *changed.Webhooks[0].FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("after the change: %+v, want one webhook that fails closed", changed.Webhooks)
	}

	for range 2 {
		if err := cfg.Remove(t.Context(), "team/b", b.client); err != nil {
			t.Fatal(err)
		}
	}
	obj := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := b.client.Get(t.Context(), client.ObjectKey{Name: cfg.Name}, obj); !apierrors.IsNotFound(err) {
		t.Errorf("after Remove: %v, want NotFound", err)
	}
}
