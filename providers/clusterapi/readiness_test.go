// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // v1beta1 is supported on purpose (Options.APIVersion).
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"mcr.dev/providers/clusterapi"
)

func TestReadinessFuncs(t *testing.T) {
	available := func(s metav1.ConditionStatus) []metav1.Condition {
		return []metav1.Condition{{Type: clusterv1.ClusterControlPlaneAvailableCondition, Status: s}}
	}
	v1b1Cond := func(typ clusterv1beta1.ConditionType, s corev1.ConditionStatus) clusterv1beta1.Conditions {
		return clusterv1beta1.Conditions{{Type: typ, Status: s}}
	}
	for _, tc := range []struct {
		name                   string
		obj                    client.Object
		initialized, available bool
	}{
		{"v1beta2 new", &clusterv1.Cluster{}, false, false},
		{"v1beta2 initialized false", &clusterv1.Cluster{Status: clusterv1.ClusterStatus{
			Initialization: clusterv1.ClusterInitializationStatus{ControlPlaneInitialized: ptr.To(false)}}}, false, false},
		{"v1beta2 initialized", &clusterv1.Cluster{Status: clusterv1.ClusterStatus{
			Initialization: clusterv1.ClusterInitializationStatus{ControlPlaneInitialized: ptr.To(true)}}}, true, false},
		{"v1beta2 initialized and available", &clusterv1.Cluster{Status: clusterv1.ClusterStatus{
			Initialization: clusterv1.ClusterInitializationStatus{ControlPlaneInitialized: ptr.To(true)},
			Conditions:     available(metav1.ConditionTrue)}}, true, true},
		{"v1beta2 initialized, unavailable", &clusterv1.Cluster{Status: clusterv1.ClusterStatus{
			Initialization: clusterv1.ClusterInitializationStatus{ControlPlaneInitialized: ptr.To(true)},
			Conditions:     available(metav1.ConditionFalse)}}, true, false},
		{"v1beta2 available but not initialized", &clusterv1.Cluster{Status: clusterv1.ClusterStatus{
			Conditions: available(metav1.ConditionTrue)}}, false, false},
		{"v1beta1 new", &clusterv1beta1.Cluster{}, false, false},
		{"v1beta1 controlPlaneReady", &clusterv1beta1.Cluster{Status: clusterv1beta1.ClusterStatus{ControlPlaneReady: true}}, true, false},
		{"v1beta1 ControlPlaneInitialized condition", &clusterv1beta1.Cluster{Status: clusterv1beta1.ClusterStatus{
			Conditions: v1b1Cond(clusterv1beta1.ControlPlaneInitializedCondition, corev1.ConditionTrue)}}, true, false},
		{"v1beta1 ControlPlaneInitialized condition false", &clusterv1beta1.Cluster{Status: clusterv1beta1.ClusterStatus{
			Conditions: v1b1Cond(clusterv1beta1.ControlPlaneInitializedCondition, corev1.ConditionFalse)}}, false, false},
		{"v1beta1 ready by ControlPlaneReady condition", &clusterv1beta1.Cluster{Status: clusterv1beta1.ClusterStatus{
			ControlPlaneReady: true,
			Conditions:        v1b1Cond(clusterv1beta1.ControlPlaneReadyCondition, corev1.ConditionTrue)}}, true, true},
		{"v1beta1 v1beta2 conditions win", &clusterv1beta1.Cluster{Status: clusterv1beta1.ClusterStatus{
			ControlPlaneReady: true,
			Conditions:        v1b1Cond(clusterv1beta1.ControlPlaneReadyCondition, corev1.ConditionTrue),
			V1Beta2:           &clusterv1beta1.ClusterV1Beta2Status{Conditions: available(metav1.ConditionFalse)}}}, true, false},
		{"not a Cluster", &corev1.Secret{}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := clusterapi.ControlPlaneInitialized(context.Background(), tc.obj); got != tc.initialized {
				t.Errorf("ControlPlaneInitialized = %t, want %t", got, tc.initialized)
			}
			if got := clusterapi.ControlPlaneAvailable(context.Background(), tc.obj); got != tc.available {
				t.Errorf("ControlPlaneAvailable = %t, want %t", got, tc.available)
			}
		})
	}
}

func TestInfrastructureKind(t *testing.T) {
	v2 := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{Kind: "DockerCluster"}}}
	v1 := &clusterv1beta1.Cluster{Spec: clusterv1beta1.ClusterSpec{InfrastructureRef: &corev1.ObjectReference{Kind: "AWSCluster"}}}
	for obj, want := range map[client.Object]string{v2: "DockerCluster", v1: "AWSCluster", &clusterv1beta1.Cluster{}: "", &corev1.Secret{}: ""} {
		if got := clusterapi.InfrastructureKind(obj); got != want {
			t.Errorf("InfrastructureKind(%T) = %q, want %q", obj, got, want)
		}
	}
}
