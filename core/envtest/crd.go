package envtest

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SchemalessCRD returns the CustomResourceDefinition of a namespaced kind whose objects may hold
// any fields, ready to create in a member with any client: for tests that need a kind some
// members serve and others do not (yet). plural is the resource name; the CRD is named
// <plural>.<group> and serves and stores gvk's version.
func SchemalessCRD(gvk schema.GroupVersionKind, plural string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + gvk.Group},
		"spec": map[string]any{
			"group": gvk.Group,
			"scope": "Namespaced",
			"names": map[string]any{
				"plural": plural, "singular": strings.ToLower(gvk.Kind),
				"kind": gvk.Kind, "listKind": gvk.Kind + "List",
			},
			"versions": []any{map[string]any{
				"name": gvk.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
}
