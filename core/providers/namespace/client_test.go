// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package namespace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/internal/testcheck"
)

func TestClientMapsTheNamespace(t *testing.T) {
	ctx := t.Context()
	host := startHost(t)
	_, aware := startProvider(t, host)
	cl := createNamespace(t, host, aware, "crud")
	other := createNamespace(t, host, aware, "crud-other")
	c := cl.GetClient()

	// Create, with the inner namespace or with none.
	for _, ns := range []string{InnerNamespace, ""} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-" + ns + "x", Namespace: ns, Labels: map[string]string{"app": "crud"}}}
		if err := c.Create(ctx, cm); err != nil {
			t.Fatalf("Create in %q: %v", ns, err)
		}
		if cm.Namespace != InnerNamespace {
			t.Fatalf("created object shows namespace %q", cm.Namespace)
		}
		var onHost corev1.ConfigMap
		if err := host.GetAPIReader().Get(ctx, client.ObjectKey{Namespace: cl.HostNamespace(), Name: cm.Name}, &onHost); err != nil {
			t.Fatalf("the object is not in the host namespace: %v", err)
		}
	}
	// The same name in another namespace-cluster is another object.
	if err := other.GetClient().Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-defaultx", Labels: map[string]string{"app": "crud"}}}); err != nil {
		t.Fatal(err)
	}

	// Get and List show the inner namespace and only the cluster's own objects.
	var got corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: InnerNamespace, Name: "cm-defaultx"}, &got); err != nil || got.Namespace != InnerNamespace {
		t.Fatalf("Get: %v, namespace %q", err, got.Namespace)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "cm-defaultx"}, &got); !apierrors.IsNotFound(err) {
		t.Fatalf("Get in another namespace: %v, want NotFound", err)
	}
	listed := func(r client.Reader, opts ...client.ListOption) []string {
		t.Helper()
		var list corev1.ConfigMapList
		if err := r.List(ctx, &list, opts...); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, item := range list.Items {
			if item.Namespace != InnerNamespace {
				t.Fatalf("listed object in namespace %q", item.Namespace)
			}
			names = append(names, item.Name)
		}
		return names
	}
	labeled := client.MatchingLabels{"app": "crud"}
	if names := listed(c, labeled); len(names) != 2 {
		t.Fatalf("List by label = %v, want the two own objects", names)
	}
	if names := listed(c, labeled, client.InNamespace("kube-system")); len(names) != 0 {
		t.Fatalf("List in another namespace = %v, want nothing", names)
	}
	// Field selectors are evaluated by the apiserver on the real namespace.
	sel := client.MatchingFieldsSelector{Selector: fields.AndSelectors(
		fields.OneTermEqualSelector("metadata.namespace", InnerNamespace),
		fields.OneTermEqualSelector("metadata.name", "cm-defaultx"),
	)}
	if names := listed(cl.GetAPIReader(), sel); len(names) != 1 {
		t.Fatalf("List by field selector = %v, want one", names)
	}
	testcheck.WaitFor(t, "the cache to see both objects", func() bool { return len(listed(cl.GetCache(), labeled)) == 2 })

	// Update and Patch.
	got.Data = map[string]string{"k": "v"}
	if err := c.Update(ctx, &got); err != nil || got.Namespace != InnerNamespace {
		t.Fatalf("Update: %v, namespace %q", err, got.Namespace)
	}
	before := got.DeepCopy()
	got.Data["k"] = "patched"
	if err := c.Patch(ctx, &got, client.MergeFrom(before)); err != nil {
		t.Fatalf("Patch: %v", err)
	}
	var onHost corev1.ConfigMap
	if err := host.GetAPIReader().Get(ctx, client.ObjectKey{Namespace: cl.HostNamespace(), Name: "cm-defaultx"}, &onHost); err != nil || onHost.Data["k"] != "patched" {
		t.Fatalf("patch did not reach the host: %v, %v", err, onHost.Data)
	}

	// Server-side apply; the answer is decoded back into the configuration.
	ac := corev1ac.ConfigMap("applied", InnerNamespace).WithData(map[string]string{"via": "apply"})
	if err := c.Apply(ctx, ac, client.FieldOwner("namespace-test")); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if ptr.Deref(ac.Namespace, "") != InnerNamespace || ac.UID == nil {
		t.Fatalf("applied configuration shows namespace %v, uid %v", ac.Namespace, ac.UID)
	}
	if err := host.GetAPIReader().Get(ctx, client.ObjectKey{Namespace: cl.HostNamespace(), Name: "applied"}, &onHost); err != nil {
		t.Fatalf("applied object is not on the host: %v", err)
	}

	// Writes outside the inner namespace are refused.
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "kube-system"}}); !apierrors.IsBadRequest(err) {
		t.Fatalf("Create in another namespace: %v, want BadRequest", err)
	}

	// DeleteAllOf touches only the cluster's own namespace.
	if err := c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(InnerNamespace), labeled); err != nil {
		t.Fatal(err)
	}
	if names := listed(cl.GetAPIReader(), labeled); len(names) != 0 {
		t.Fatalf("DeleteAllOf left %v", names)
	}
	if names := listed(other.GetAPIReader(), labeled); len(names) != 1 {
		t.Fatalf("DeleteAllOf reached another namespace: %v left there", names)
	}

	// Delete.
	if err := c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "applied", Namespace: InnerNamespace}}); err != nil {
		t.Fatalf("Delete: %v", err)
	}

	// Cluster-scoped objects are the host's.
	var nss corev1.NamespaceList
	if err := cl.GetAPIReader().List(ctx, &nss); err != nil || len(nss.Items) < 2 {
		t.Fatalf("listing cluster-scoped objects: %d, %v", len(nss.Items), err)
	}
}

func TestSubresourcesMapTheNamespace(t *testing.T) {
	ctx := t.Context()
	host := startHost(t)
	_, aware := startProvider(t, host)
	cl := createNamespace(t, host, aware, "subresources")
	c := cl.GetClient()

	// Pods need their service account to exist; nothing else creates it on a bare apiserver.
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: InnerNamespace},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []corev1.Container{{Name: "c", Image: "example.invalid/none"}},
		},
	}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}

	pod.Status.Message = "status written through the namespace-cluster"
	if err := c.Status().Update(ctx, pod); err != nil || pod.Namespace != InnerNamespace {
		t.Fatalf("status update: %v, namespace %q", err, pod.Namespace)
	}
	var onHost corev1.Pod
	if err := host.GetAPIReader().Get(ctx, client.ObjectKey{Namespace: cl.HostNamespace(), Name: "p"}, &onHost); err != nil || onHost.Status.Message != pod.Status.Message {
		t.Fatalf("status did not reach the host: %v, %q", err, onHost.Status.Message)
	}

	before := pod.DeepCopy()
	pod.Status.Reason = "Patched"
	if err := c.Status().Patch(ctx, pod, client.MergeFrom(before)); err != nil {
		t.Fatalf("status patch: %v", err)
	}

	// A subresource with a body of its own: the Eviction names the inner namespace too.
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: InnerNamespace}}
	if err := c.SubResource("eviction").Create(ctx, pod, eviction); err != nil {
		t.Fatalf("eviction: %v", err)
	}
	if eviction.Namespace != InnerNamespace {
		t.Fatalf("eviction shows namespace %q afterwards", eviction.Namespace)
	}
	testcheck.WaitFor(t, "the evicted pod to be gone", func() bool {
		return apierrors.IsNotFound(host.GetAPIReader().Get(ctx, client.ObjectKey{Namespace: cl.HostNamespace(), Name: "p"}, &onHost))
	})
}
