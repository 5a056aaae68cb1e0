// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"

	"mcr.dev/providers/kcp"
)

// TestNewRefusesEndpointObjectsItCannotRead checks the errors of New and NewInitializing for
// endpoint objects they could never follow, before anything is started.
func TestNewRefusesEndpointObjectsItCannotRead(t *testing.T) {
	cfg := &rest.Config{Host: "https://kcp.example.com/clusters/root:provider"}
	for _, tc := range []struct {
		name     string
		new      func() (*kcp.Provider, error)
		contains string
	}{{
		name: "another type without EndpointURLs",
		new: func() (*kcp.Provider, error) {
			return kcp.New(cfg, "ns/name", kcp.Options{EndpointObject: &corev1.ConfigMap{}})
		},
		contains: "Options.EndpointURLs is required with an Options.EndpointObject of type *v1.ConfigMap",
	}, {
		name: "a WorkspaceType for New",
		new: func() (*kcp.Provider, error) {
			return kcp.New(cfg, "t", kcp.Options{EndpointObject: &tenancyv1alpha1.WorkspaceType{}})
		},
		contains: "Options.EndpointURLs is required",
	}, {
		name:     "an empty name",
		new:      func() (*kcp.Provider, error) { return kcp.New(cfg, "", kcp.Options{}) },
		contains: "the name of the APIExportEndpointSlice is empty",
	}, {
		name: "a namespaced name without namespace",
		new: func() (*kcp.Provider, error) {
			return kcp.New(cfg, "/name", kcp.Options{EndpointObject: &corev1.ConfigMap{}, EndpointURLs: kcp.InitializingURLs})
		},
		contains: `not <namespace>/<name>: "/name"`,
	}, {
		name: "a type missing from the scheme",
		new: func() (*kcp.Provider, error) {
			return kcp.New(cfg, "widgets", kcp.Options{Scheme: runtime.NewScheme()})
		},
		contains: "Options.EndpointObject",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.new()
			if err == nil || !strings.Contains(err.Error(), tc.contains) {
				t.Fatalf("got %v, %v; want an error containing %q", p, err, tc.contains)
			}
		})
	}
	for _, name := range []string{"widgets", "default/endpoints"} {
		if _, err := kcp.New(cfg, name, kcp.Options{EndpointObject: &corev1.ConfigMap{}, EndpointURLs: kcp.InitializingURLs}); err != nil {
			t.Errorf("New(%q) with a ConfigMap: %v", name, err)
		}
	}
	if _, err := kcp.NewInitializing(cfg, "tenant", kcp.Options{}); err != nil {
		t.Errorf("NewInitializing: %v", err)
	}
}

// TestInitializingURLs checks which URLs of a WorkspaceType are its initializing virtual
// workspace, and that a type without an initializer of its own is refused.
func TestInitializingURLs(t *testing.T) {
	wt := &tenancyv1alpha1.WorkspaceType{Spec: tenancyv1alpha1.WorkspaceTypeSpec{Initializer: true}}
	wt.Name = "tenant"
	wt.Status.VirtualWorkspaces = []tenancyv1alpha1.VirtualWorkspace{
		{URL: "https://a/services/initializingworkspaces/x:tenant/", Type: tenancyv1alpha1.VirtualWorkspaceTypeInitializing},
		{URL: "https://a/services/terminatingworkspaces/x:tenant", Type: tenancyv1alpha1.VirtualWorkspaceTypeTerminating},
		{URL: "https://b/services/initializingworkspaces/x:tenant"}, // no type: the path tells
		{URL: "https://b/services/terminatingworkspaces/x:tenant"},
		{URL: "https://a/services/initializingworkspaces/x:tenant", Type: tenancyv1alpha1.VirtualWorkspaceTypeInitializing},
	}
	got, err := kcp.InitializingURLs(wt)
	want := []string{"https://a/services/initializingworkspaces/x:tenant", "https://b/services/initializingworkspaces/x:tenant"}
	if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("InitializingURLs = %q, %v; want %q", got, err, want)
	}
	wt.Spec.Initializer = false
	if _, err := kcp.InitializingURLs(wt); err == nil || !strings.Contains(err.Error(), "spec.initializer false") {
		t.Errorf("InitializingURLs of a type without initializer: %v, want an error", err)
	}
	if _, err := kcp.InitializingURLs(&apisv1alpha1.APIExportEndpointSlice{}); err == nil {
		t.Error("InitializingURLs of a slice: no error")
	}
}
