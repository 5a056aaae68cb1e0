// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package webhook_test

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"mcr.dev/core/webhook"
)

// Rendering fills in each member's path, the CA and the fields the API server requires, and
// leaves the templates the caller gave untouched.
func TestConfigurationRendersEachMember(t *testing.T) {
	perCluster, err := webhook.New(admission.HandlerFunc(echo), webhook.Options{Path: "/validate"})
	if err != nil {
		t.Fatal(err)
	}
	oneForAll, err := webhook.New(admission.HandlerFunc(echo), webhook.Options{Path: "/mutate", ClusterResolver: webhook.KCPClusterResolver})
	if err != nil {
		t.Fatal(err)
	}
	validating := webhook.ValidatingHook{Webhook: perCluster}
	validating.Name = "v.mcr.dev"
	mutating := webhook.MutatingHook{Webhook: oneForAll}
	mutating.Name = "m.mcr.dev"
	cfg := webhook.Configuration{
		Name: "policy",
		Endpoint: webhook.Endpoint{
			Service:  &admissionregistrationv1.ServiceReference{Namespace: "system", Name: "webhooks", Path: ptr.To("/fleet/")},
			CABundle: []byte("CA"),
		},
		Validating: []webhook.ValidatingHook{validating},
		Mutating:   []webhook.MutatingHook{mutating},
	}
	v, err := cfg.RenderValidating("team/east")
	if err != nil {
		t.Fatal(err)
	}
	m, err := cfg.RenderMutating("team/east")
	if err != nil {
		t.Fatal(err)
	}
	got := v.Webhooks[0]
	if v.Name != "policy" || v.Kind != "ValidatingWebhookConfiguration" || got.ClientConfig.URL != nil ||
		*got.ClientConfig.Service.Path != "/fleet/validate/team~2Feast" || got.ClientConfig.Service.Name != "webhooks" ||
		string(got.ClientConfig.CABundle) != "CA" || *got.SideEffects != admissionregistrationv1.SideEffectClassNone ||
		len(got.AdmissionReviewVersions) != 1 || got.AdmissionReviewVersions[0] != "v1" {
		t.Errorf("validating: %+v", v)
	}
	if path := *m.Webhooks[0].ClientConfig.Service.Path; path != "/fleet/mutate" {
		t.Errorf("a webhook with a resolver has one path for all, got %s", path)
	}
	if cfg.Endpoint.Service.Path == nil || *cfg.Endpoint.Service.Path != "/fleet/" || validating.SideEffects != nil || cfg.Validating[0].SideEffects != nil {
		t.Error("rendering changed the caller's Configuration")
	}

	cfg.Mutating = nil
	if m, err := cfg.RenderMutating("a"); m != nil || err != nil {
		t.Errorf("without mutating hooks: %v, %v; want nothing", m, err)
	}
}

// A Configuration that cannot work is refused with what to fix, without quoting a URL that may
// hold credentials.
func TestConfigurationIsChecked(t *testing.T) {
	w, err := webhook.New(admission.HandlerFunc(echo), webhook.Options{Path: "/validate"})
	if err != nil {
		t.Fatal(err)
	}
	named := webhook.ValidatingHook{Webhook: w}
	named.Name = "v.mcr.dev"
	for _, tc := range []struct {
		cfg  webhook.Configuration
		want string
	}{
		{webhook.Configuration{Endpoint: webhook.Endpoint{URL: "https://h"}}, "Name is required"},
		{webhook.Configuration{Name: "x"}, "exactly one of Endpoint.URL and Endpoint.Service"},
		{webhook.Configuration{Name: "x", Endpoint: webhook.Endpoint{URL: "https://admin:hunter2@h"}}, "without user, query or fragment"},
		{webhook.Configuration{Name: "x", Endpoint: webhook.Endpoint{URL: "http://h"}}, "must be https://"},
		{webhook.Configuration{Name: "x", Endpoint: webhook.Endpoint{URL: "https://h"}, Validating: []webhook.ValidatingHook{{}}}, "needs a Webhook and a Name"},
	} {
		_, err := tc.cfg.RenderValidating("a")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%+v: %v, want an error with %q", tc.cfg, err, tc.want)
		}
	}
	ok := webhook.Configuration{Name: "x", Endpoint: webhook.Endpoint{URL: "https://h:9443"}, Validating: []webhook.ValidatingHook{named}}
	v, err := ok.RenderValidating("")
	if err != nil || *v.Webhooks[0].ClientConfig.URL != "https://h:9443/validate" {
		t.Errorf("the local cluster: %v, %v; want the base path", v, err)
	}
}
