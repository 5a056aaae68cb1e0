// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Deep copies, written by hand in the shape controller-gen generates; keep them in step with the
// types.

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DeepCopyInto copies the receiver into out.
func (in *ProjectControlPlane) DeepCopyInto(out *ProjectControlPlane) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = in.Spec
	in.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a deep copy of the receiver.
func (in *ProjectControlPlane) DeepCopy() *ProjectControlPlane {
	if in == nil {
		return nil
	}
	out := new(ProjectControlPlane)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject returns a deep copy of the receiver as a runtime.Object.
func (in *ProjectControlPlane) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies the receiver into out.
func (in *ProjectControlPlaneStatus) DeepCopyInto(out *ProjectControlPlaneStatus) {
	*out = *in
	if in.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(in.Conditions))
		for i := range in.Conditions {
			in.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
}

// DeepCopy returns a deep copy of the receiver.
func (in *ProjectControlPlaneStatus) DeepCopy() *ProjectControlPlaneStatus {
	if in == nil {
		return nil
	}
	out := new(ProjectControlPlaneStatus)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out.
func (in *ProjectControlPlaneList) DeepCopyInto(out *ProjectControlPlaneList) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]ProjectControlPlane, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a deep copy of the receiver.
func (in *ProjectControlPlaneList) DeepCopy() *ProjectControlPlaneList {
	if in == nil {
		return nil
	}
	out := new(ProjectControlPlaneList)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject returns a deep copy of the receiver as a runtime.Object.
func (in *ProjectControlPlaneList) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}
