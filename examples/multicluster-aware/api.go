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
	"sigs.k8s.io/controller-runtime/pkg/client"
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

// FleetConfigMapStatus is what the members report.
type FleetConfigMapStatus struct {
	// ObservedGeneration is the generation of the spec the status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Synced is "<members in sync>/<members>", for kubectl get.
	Synced string `json:"synced,omitempty"`
	// Clusters has one entry per member cluster engaged at the last reconcile, by name.
	Clusters []ClusterStatus `json:"clusters,omitempty"`
}

// ClusterStatus is the state of the copy in one member cluster.
type ClusterStatus struct {
	// Name is the member's cluster name.
	Name string `json:"name"`
	// Synced is true when the member's copy has the spec's data.
	Synced bool `json:"synced"`
	// Message says why the copy is not in sync.
	Message string `json:"message,omitempty"`
}

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
	if f.Status.Clusters != nil {
		out.Status.Clusters = append([]ClusterStatus(nil), f.Status.Clusters...)
	}
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
					{Name: "Synced", Type: "string", JSONPath: ".status.synced"},
					{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
				},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"data": {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Schema: &str}},
						}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"observedGeneration": {Type: "integer", Format: "int64"},
							"synced":             str,
							"clusters": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
								Type:     "object",
								Required: []string{"name", "synced"},
								Properties: map[string]apiextensionsv1.JSONSchemaProps{
									"name":    str,
									"synced":  {Type: "boolean"},
									"message": str,
								},
							}}},
						}},
					},
				}},
			}},
		},
	}
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
