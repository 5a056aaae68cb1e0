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
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The API an add-on brings to some members: Backup, a namespaced kind. A real project generates
// the deep-copy functions and the CRD with controller-gen; they are written out here to keep the
// example in one directory without generated files.

// GroupVersion is the API group and version of Backup.
var GroupVersion = schema.GroupVersion{Group: "examples.mcr.dev", Version: "v1alpha1"}

// AddToScheme registers Backup with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Backup{}, &BackupList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Phases of BackupStatus.
const (
	// PhaseScheduled: the target exists and is labeled as a backup target.
	PhaseScheduled = "Scheduled"
	// PhaseNoTarget: there is no ConfigMap of the target's name labeled TargetLabel=true in the
	// Backup's namespace.
	PhaseNoTarget = "NoTarget"
)

// Backup asks for a ConfigMap of its namespace to be backed up on a schedule.
type Backup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BackupSpec   `json:"spec,omitempty"`
	Status BackupStatus `json:"status,omitempty"`
}

// BackupSpec says what to back up and when.
type BackupSpec struct {
	// Target names the ConfigMap to back up, in the Backup's namespace.
	Target string `json:"target"`
	// Schedule is a cron schedule, e.g. "0 3 * * *".
	Schedule string `json:"schedule,omitempty"`
}

// BackupStatus is what the controller found.
type BackupStatus struct {
	// Phase is PhaseScheduled or PhaseNoTarget; empty until the first reconcile.
	Phase string `json:"phase,omitempty"`
	// Cluster is the name of the fleet cluster the controller found the Backup in.
	Cluster string `json:"cluster,omitempty"`
}

// BackupList is a list of Backups.
type BackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Backup `json:"items"`
}

// DeepCopyInto copies b into out.
func (b *Backup) DeepCopyInto(out *Backup) {
	*out = *b
	b.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
}

// DeepCopyObject returns a deep copy.
func (b *Backup) DeepCopyObject() runtime.Object {
	out := &Backup{}
	b.DeepCopyInto(out)
	return out
}

// DeepCopyObject returns a deep copy.
func (l *BackupList) DeepCopyObject() runtime.Object {
	out := &BackupList{TypeMeta: l.TypeMeta}
	l.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Backup, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// crd is the CustomResourceDefinition of Backup: what the add-on installs.
func crd() *apiextensionsv1.CustomResourceDefinition {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	column := func(name, path string) apiextensionsv1.CustomResourceColumnDefinition {
		return apiextensionsv1.CustomResourceColumnDefinition{Name: name, Type: "string", JSONPath: path}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "backups." + GroupVersion.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: GroupVersion.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: "Backup", ListKind: "BackupList", Plural: "backups", Singular: "backup",
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: GroupVersion.Version, Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					column("Target", ".spec.target"), column("Phase", ".status.phase"), column("Cluster", ".status.cluster"),
				},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Required: []string{"target"}, Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"target": str, "schedule": str,
						}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"phase": str, "cluster": str,
						}},
					},
				}},
			}},
		},
	}
}

// installCRD creates the Backup CRD in the cluster of cfg unless it exists, and waits until it
// is established.
func installCRD(ctx context.Context, cfg *rest.Config) error {
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return fmt.Errorf("installing the Backup CRD: %w", err)
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
