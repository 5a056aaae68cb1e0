// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The API the service provider exports: Database, platform-mesh.examples.mcr.dev/v1alpha1,
// whose schema is config/crd.yaml. A real project generates the deep-copy functions with
// controller-gen; they are written out here to keep the example free of generated files.

// GroupVersion is the API group and version of Database.
var GroupVersion = schema.GroupVersion{Group: "platform-mesh.examples.mcr.dev", Version: "v1alpha1"}

// AddToScheme registers Database with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Database{}, &DatabaseList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Phases of DatabaseStatus.
const (
	// PhaseReady: the database's projection is in place downstream and matches the spec of
	// ObservedGeneration.
	PhaseReady = "Ready"
	// PhaseFailed: the projection cannot be written; Message says why. The controller retries.
	PhaseFailed = "Failed"
)

// Database is a database a consumer orders in its kcp workspace. It is cluster-scoped: one
// name per workspace.
type Database struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   DatabaseSpec   `json:"spec,omitempty"`
	Status DatabaseStatus `json:"status,omitempty"`
}

// DatabaseSpec is what the consumer orders.
type DatabaseSpec struct {
	// Engine is postgres (the default) or mysql.
	Engine string `json:"engine,omitempty"`
	// Version is the engine's major version, e.g. "16".
	Version string `json:"version,omitempty"`
	// StorageGiB is the storage in GiB; at least 1, the default.
	StorageGiB int32 `json:"storageGiB,omitempty"`
}

// DatabaseStatus is what the service provider reports back to the consumer.
type DatabaseStatus struct {
	// Phase is PhaseReady or PhaseFailed; empty until the first reconcile.
	Phase string `json:"phase,omitempty"`
	// Downstream is where the database runs: <namespace>/<name> in the downstream cluster.
	Downstream string `json:"downstream,omitempty"`
	// ObservedGeneration is the generation of the spec the status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Message says why the database is not Ready.
	Message string `json:"message,omitempty"`
}

// DatabaseList is a list of Databases.
type DatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Database `json:"items"`
}

// DeepCopyInto copies d into out. Spec and status hold values only.
func (d *Database) DeepCopyInto(out *Database) {
	*out = *d
	d.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
}

// DeepCopyObject returns a deep copy.
func (d *Database) DeepCopyObject() runtime.Object {
	out := &Database{}
	d.DeepCopyInto(out)
	return out
}

// DeepCopyObject returns a deep copy.
func (l *DatabaseList) DeepCopyObject() runtime.Object {
	out := &DatabaseList{TypeMeta: l.TypeMeta}
	l.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Database, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}
