// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeepCopyDoesNotShareConditions(t *testing.T) {
	in := &ProjectList{Items: []Project{{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}},
		Spec:       ProjectSpec{OwnerRef: OwnerReference{Kind: "Organization", Name: "o"}},
		Status:     ProjectStatus{Conditions: []metav1.Condition{{Type: ProjectReady, Status: metav1.ConditionTrue}}},
	}}}
	out, ok := in.DeepCopyObject().(*ProjectList)
	if !ok {
		t.Fatalf("DeepCopyObject returned %T", in.DeepCopyObject())
	}
	out.Items[0].Status.Conditions[0].Status = metav1.ConditionFalse
	out.Items[0].Labels["a"] = "changed"
	if in.Items[0].Status.Conditions[0].Status != metav1.ConditionTrue || in.Items[0].Labels["a"] != "b" {
		t.Error("the copy shares conditions or labels with the original")
	}
	if out.Items[0].Spec.OwnerRef.Name != "o" {
		t.Error("the copy lost the spec")
	}
}
