// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
)

// installGroup is the API group of the CRDs testInstallCRDs installs.
const installGroup = "install.envtest.mcr.dev"

// testInstallCRDs runs on m, a member of TestFleet's fleet.
func testInstallCRDs(t *testing.T, m *envtest.Member) {
	// Its scheme (client-go's) knows nothing of apiextensions.k8s.io: InstallCRDs must not need it.
	c, err := client.New(m.Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	withDeadline := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		t.Cleanup(cancel)
		return ctx
	}

	t.Run("Typed", func(t *testing.T) {
		crd := typedCRD("Painting", "paintings")
		if err := envtest.InstallCRDs(withDeadline(t), c, crd); err != nil {
			t.Fatalf("InstallCRDs: %v", err)
		}
		if crd.ResourceVersion != "" || crd.Kind != "" {
			t.Fatalf("InstallCRDs changed its argument: resourceVersion %q, kind %q", crd.ResourceVersion, crd.Kind)
		}
		// Served at once, with its schema: no retry in between.
		createCustomObject(t, c, schema.GroupVersionKind{Group: installGroup, Version: "v1", Kind: "Painting"}, "blue")
	})

	t.Run("Unstructured", func(t *testing.T) {
		gvk := schema.GroupVersionKind{Group: installGroup, Version: "v1", Kind: "Gadget"}
		crd := envtest.SchemalessCRD(gvk, "gadgets")
		// A plain int, as hand-written unstructured CRDs hold them (not the int64 of a decoded one).
		version := crd.Object["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)
		version["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["maxProperties"] = 8
		if err := envtest.InstallCRDs(withDeadline(t), c, crd); err != nil {
			t.Fatalf("InstallCRDs: %v", err)
		}
		if crd.GetResourceVersion() != "" {
			t.Fatalf("InstallCRDs changed its argument: resourceVersion %q", crd.GetResourceVersion())
		}
		createCustomObject(t, c, gvk, "red")
	})

	t.Run("Twice", func(t *testing.T) {
		ctx := withDeadline(t)
		crds := []client.Object{
			typedCRD("Sculpture", "sculptures"),
			envtest.SchemalessCRD(schema.GroupVersionKind{Group: installGroup, Version: "v1", Kind: "Sketch"}, "sketches"),
		}
		for i := range 2 {
			if err := envtest.InstallCRDs(ctx, c, crds...); err != nil {
				t.Fatalf("InstallCRDs, call %d: %v", i+1, err)
			}
		}
	})

	t.Run("NamesTaken", func(t *testing.T) {
		ctx := withDeadline(t)
		first := envtest.SchemalessCRD(schema.GroupVersionKind{Group: installGroup, Version: "v1", Kind: "Widget"}, "widgets")
		if err := envtest.InstallCRDs(ctx, c, first); err != nil {
			t.Fatalf("InstallCRDs: %v", err)
		}
		// Its singular is the resource name of the first: the member refuses its names for good.
		second := envtest.SchemalessCRD(schema.GroupVersionKind{Group: installGroup, Version: "v1", Kind: "Gizmo"}, "gizmos")
		if err := unstructured.SetNestedField(second.Object, "widgets", "spec", "names", "singular"); err != nil {
			t.Fatal(err)
		}
		err := envtest.InstallCRDs(ctx, c, second)
		if err == nil {
			t.Fatal("InstallCRDs of a CRD whose names are taken returned nil")
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("InstallCRDs waited for its deadline instead of failing on the refused names: %v", err)
		}
		if !strings.Contains(err.Error(), second.GetName()) || !strings.Contains(err.Error(), "already in use") {
			t.Fatalf("error %q does not name %s and the member's reason", err, second.GetName())
		}
	})

	t.Run("Canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		crd := envtest.SchemalessCRD(schema.GroupVersionKind{Group: installGroup, Version: "v1", Kind: "Latecomer"}, "latecomers")
		err := envtest.InstallCRDs(ctx, c, crd)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("InstallCRDs with a canceled context: %v, want an error wrapping context.Canceled", err)
		}
		if !strings.Contains(err.Error(), crd.GetName()) {
			t.Fatalf("error %q does not name %s", err, crd.GetName())
		}
	})

	t.Run("NotACRD", func(t *testing.T) {
		cm := &unstructured.Unstructured{}
		cm.SetAPIVersion("v1")
		cm.SetKind("ConfigMap")
		cm.SetNamespace("default")
		cm.SetName("not-a-crd")
		if err := envtest.InstallCRDs(withDeadline(t), c, cm); err == nil || !strings.Contains(err.Error(), "not-a-crd") {
			t.Fatalf("InstallCRDs of a ConfigMap: %v, want an error naming it", err)
		}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(cm), cm); !apierrors.IsNotFound(err) {
			t.Fatalf("the ConfigMap was created anyway (err=%v)", err)
		}
	})
}

// typedCRD returns a namespaced CRD of installGroup/v1 whose objects have a spec.color.
func typedCRD(kind, plural string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + installGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: installGroup,
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List",
			},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"color": {Type: "string"}}},
					},
				}},
			}},
		},
	}
}

// createCustomObject creates an object of gvk in the default namespace and reads it back.
func createCustomObject(t *testing.T, c client.Client, gvk schema.GroupVersionKind, color string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"color": color}}}
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace("default")
	obj.SetName(color)
	if err := c.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating a %s after InstallCRDs: %v", gvk.Kind, err)
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(gvk)
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "spec", "color"); v != color {
		t.Fatalf("%s %s has spec.color %q, want %q", gvk.Kind, color, v, color)
	}
}
