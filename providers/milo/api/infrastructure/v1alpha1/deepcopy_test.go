// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeepCopyDoesNotShareConditions(t *testing.T) {
	in := &ProjectControlPlaneList{Items: []ProjectControlPlane{{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{OwnerNameAnnotation: "o"}},
		Status: ProjectControlPlaneStatus{Conditions: []metav1.Condition{
			{Type: ProjectControlPlaneReady, Status: metav1.ConditionTrue, Reason: ReasonReady},
		}},
	}}}
	out, ok := in.DeepCopyObject().(*ProjectControlPlaneList)
	if !ok {
		t.Fatalf("DeepCopyObject returned %T", in.DeepCopyObject())
	}
	out.Items[0].Status.Conditions[0].Status = metav1.ConditionFalse
	out.Items[0].Annotations[OwnerNameAnnotation] = "changed"
	if in.Items[0].Status.Conditions[0].Status != metav1.ConditionTrue || in.Items[0].Annotations[OwnerNameAnnotation] != "o" {
		t.Error("the copy shares conditions or annotations with the original")
	}
}
