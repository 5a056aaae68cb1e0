// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package webhook_test

import (
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/webhook"
)

func TestKCPClusterResolver(t *testing.T) {
	annotated := func(name string) runtime.RawExtension {
		return runtime.RawExtension{Raw: []byte(`{"metadata":{"name":"cm","annotations":{"kcp.io/cluster":"` + name + `"}}}`)}
	}
	plain := runtime.RawExtension{Raw: []byte(`{"metadata":{"name":"cm"}}`)}
	extra := authenticationv1.UserInfo{Username: "alice", Extra: map[string]authenticationv1.ExtraValue{
		webhook.KCPClusterNameExtra: {"from-extra"},
	}}
	for _, tc := range []struct {
		what    string
		req     admissionv1.AdmissionRequest
		want    multicluster.ClusterName
		wantErr string
	}{
		{what: "create: the object's annotation, before the user's extra",
			req: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: annotated("root-team"), UserInfo: extra}, want: "root-team"},
		{what: "delete: the old object's annotation",
			req: admissionv1.AdmissionRequest{Operation: admissionv1.Delete, OldObject: annotated("gone-soon")}, want: "gone-soon"},
		{what: "an object decoded already",
			req: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: runtime.RawExtension{Object: &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{webhook.KCPClusterAnnotation: "typed"}}}}}, want: "typed"},
		{what: "no annotation: the user's extra",
			req: admissionv1.AdmissionRequest{Operation: admissionv1.Connect, Object: plain, UserInfo: extra}, want: "from-extra"},
		{what: "neither",
			req:     admissionv1.AdmissionRequest{Kind: metav1.GroupVersionKind{Kind: "ConfigMap"}, Namespace: "ns", Name: "cm", Object: plain},
			wantErr: "ConfigMap ns/cm has no kcp.io/cluster annotation, and the user has no authentication.kcp.io/cluster-name extra"},
		{what: "two values of the extra are no answer",
			req: admissionv1.AdmissionRequest{UserInfo: authenticationv1.UserInfo{Extra: map[string]authenticationv1.ExtraValue{
				webhook.KCPClusterNameExtra: {"x", "y"}}}},
			wantErr: "has no kcp.io/cluster annotation"},
		{what: "malformed object",
			req:     admissionv1.AdmissionRequest{Object: runtime.RawExtension{Raw: []byte(`{"metadata":`)}},
			wantErr: "reading annotations"},
	} {
		got, err := webhook.KCPClusterResolver(t.Context(), admission.Request{AdmissionRequest: tc.req})
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: %q, %v; want an error with %q", tc.what, got, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.what, got, err, tc.want)
		}
	}
}
