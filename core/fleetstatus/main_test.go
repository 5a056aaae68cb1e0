// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleetstatus_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
)

// fleet is shared by the tests of this package; its one member "hub" serves the Widget CRD.
var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	envtest.Main(m, envtest.Options{Members: []string{"hub"}}, func(f *envtest.Fleet) error {
		fleet = f
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return installWidgetCRD(ctx, f.Member("hub").Config())
	})
}

// installWidgetCRD installs the CRD of Widget, with a status subresource and a schema of the
// fleet status as controller-gen would derive it from the markers of FleetStatus, and waits
// until it is established.
func installWidgetCRD(ctx context.Context, cfg *rest.Config) error {
	str := map[string]any{"type": "string"}
	integer := map[string]any{"type": "integer", "format": "int32"}
	condition := func(extra map[string]any, required ...any) map[string]any {
		props := map[string]any{
			"type":               map[string]any{"type": "string", "minLength": 1, "maxLength": 316},
			"status":             map[string]any{"type": "string", "enum": []any{"True", "False", "Unknown"}},
			"reason":             map[string]any{"type": "string", "maxLength": 1024},
			"message":            map[string]any{"type": "string", "maxLength": 32768},
			"lastTransitionTime": map[string]any{"type": "string", "format": "date-time"},
			"observedGeneration": map[string]any{"type": "integer", "format": "int64", "minimum": 0},
		}
		for k, v := range extra {
			props[k] = v
		}
		return map[string]any{"type": "object", "properties": props, "required": required}
	}
	status := map[string]any{"type": "object", "properties": map[string]any{
		"conditions": map[string]any{
			"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"type"},
			"items": condition(nil, "type", "status", "lastTransitionTime", "reason", "message"),
		},
		"clusters": map[string]any{
			"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"cluster", "type"},
			"items": condition(map[string]any{"cluster": map[string]any{"type": "string", "minLength": 1}},
				"cluster", "type", "status", "lastTransitionTime"),
		},
		"readyClusters": integer,
		"totalClusters": integer,
	}}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "widgets." + widgetGV.Group},
		"spec": map[string]any{
			"group": widgetGV.Group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{
				"name": widgetGV.Version, "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"spec":   map[string]any{"type": "object", "properties": map[string]any{"color": str}},
						"status": status,
					},
				}},
			}},
		},
	}}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	return envtest.InstallCRDs(ctx, c, crd)
}

// hubClient is an uncached client of the hub that knows Widgets.
func hubClient(t testing.TB) client.WithWatch {
	t.Helper()
	s := runtime.NewScheme()
	if err := addWidgets(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.NewWithWatch(fleet.Member("hub").Config(), client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
