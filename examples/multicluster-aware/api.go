// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/fleetstatus"
)

// The API of this example: one namespaced kind in the host cluster. A real project generates
// the deep-copy functions and the CRD with controller-gen; they are written out here to keep the
// example in one directory without generated files.

// GroupVersion is the API group and version of FleetConfigMap.
var GroupVersion = schema.GroupVersion{Group: "examples.mcr.dev", Version: "v1alpha1"}

// AddToScheme registers FleetConfigMap with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &FleetConfigMap{}, &FleetConfigMapList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// FleetConfigMap is a ConfigMap for the whole fleet. It lives in the host cluster; the controller
// keeps a ConfigMap with the same namespace, name and data in every member cluster (spec goes
// down) and reports for every member whether its copy is in place (status comes up).
type FleetConfigMap struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FleetConfigMapSpec   `json:"spec,omitempty"`
	Status FleetConfigMapStatus `json:"status,omitempty"`
}

// FleetConfigMapSpec is what every member gets.
type FleetConfigMapSpec struct {
	// Data is the data of the ConfigMap in every member.
	Data map[string]string `json:"data,omitempty"`
}

// FleetConfigMapStatus is what the members report, maintained by a fleetstatus.Aggregator: a
// condition per member (clusters), the counts, and the summary condition FleetSynced among the
// conditions.
type FleetConfigMapStatus struct {
	// Conditions has FleetSynced: True when every member's copy is in sync.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// FleetStatus has one Synced condition per member cluster engaged at the last reconcile,
	// and the counts.
	fleetstatus.FleetStatus `json:",inline"`
}

// FleetStatus and StatusConditions make FleetConfigMap a fleetstatus.Object.
func (f *FleetConfigMap) FleetStatus() *fleetstatus.FleetStatus { return &f.Status.FleetStatus }
func (f *FleetConfigMap) StatusConditions() *[]metav1.Condition { return &f.Status.Conditions }

// FleetConfigMapList is a list of FleetConfigMaps.
type FleetConfigMapList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FleetConfigMap `json:"items"`
}

// DeepCopyInto copies f into out.
func (f *FleetConfigMap) DeepCopyInto(out *FleetConfigMap) {
	*out = *f
	out.TypeMeta = f.TypeMeta
	f.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if f.Spec.Data != nil {
		out.Spec.Data = make(map[string]string, len(f.Spec.Data))
		for k, v := range f.Spec.Data {
			out.Spec.Data[k] = v
		}
	}
	if f.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(f.Status.Conditions))
		for i := range f.Status.Conditions {
			f.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
	f.FleetStatus().DeepCopyInto(out.FleetStatus())
}

// DeepCopyObject returns a deep copy.
func (f *FleetConfigMap) DeepCopyObject() runtime.Object {
	out := &FleetConfigMap{}
	f.DeepCopyInto(out)
	return out
}

// DeepCopyObject returns a deep copy.
func (l *FleetConfigMapList) DeepCopyObject() runtime.Object {
	out := &FleetConfigMapList{TypeMeta: l.TypeMeta}
	l.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]FleetConfigMap, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// crd is the CustomResourceDefinition of FleetConfigMap.
func crd() *apiextensionsv1.CustomResourceDefinition {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "fleetconfigmaps." + GroupVersion.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: GroupVersion.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: "FleetConfigMap", ListKind: "FleetConfigMapList", Plural: "fleetconfigmaps", Singular: "fleetconfigmap",
				ShortNames: []string{"fcm"},
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: GroupVersion.Version, Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Synced", Type: "string", JSONPath: `.status.conditions[?(@.type=="FleetSynced")].status`},
					{Name: "Ready", Type: "integer", JSONPath: ".status.readyClusters"},
					{Name: "Clusters", Type: "integer", JSONPath: ".status.totalClusters"},
					{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
				},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"data": {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Schema: &str}},
						}},
						"status": statusSchema(),
					},
				}},
			}},
		},
	}
}

// statusSchema is the schema of FleetConfigMapStatus: what controller-gen derives from the
// markers of metav1.Condition and fleetstatus.FleetStatus.
func statusSchema() apiextensionsv1.JSONSchemaProps {
	condition := func(required ...string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{
			Type:     "object",
			Required: required,
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"type":               {Type: "string", MinLength: ptr.To[int64](1), MaxLength: ptr.To[int64](316)},
				"status":             {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"True"`)}, {Raw: []byte(`"False"`)}, {Raw: []byte(`"Unknown"`)}}},
				"reason":             {Type: "string", MaxLength: ptr.To[int64](1024)},
				"message":            {Type: "string", MaxLength: ptr.To[int64](32768)},
				"lastTransitionTime": {Type: "string", Format: "date-time"},
				"observedGeneration": {Type: "integer", Format: "int64", Minimum: ptr.To[float64](0)},
			},
		}
	}
	clusterCondition := condition("cluster", "type", "status", "lastTransitionTime")
	clusterCondition.Properties["cluster"] = apiextensionsv1.JSONSchemaProps{Type: "string", MinLength: ptr.To[int64](1)}
	count := apiextensionsv1.JSONSchemaProps{Type: "integer", Format: "int32"}
	return apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"conditions": {
			Type: "array", XListType: ptr.To("map"), XListMapKeys: []string{"type"},
			Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: ptr.To(condition("type", "status", "lastTransitionTime", "reason", "message"))},
		},
		"clusters": {
			Type: "array", XListType: ptr.To("map"), XListMapKeys: []string{"cluster", "type"},
			Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &clusterCondition},
		},
		"readyClusters": count,
		"totalClusters": count,
	}}
}

// installCRD creates the CRD in the host cluster unless it exists, and waits until it is served.
func installCRD(ctx context.Context, cfg *rest.Config) error {
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return fmt.Errorf("installing the CRD: %w", err)
	}
	want := crd()
	if err := c.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("installing the CRD %s: %w", want.Name, err)
	}
	for {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
			return fmt.Errorf("waiting for the CRD %s: %w", want.Name, err)
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the CRD %s to be established: %w", want.Name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
