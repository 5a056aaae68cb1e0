// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package ownership_test

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/ownership"
)

var testOwner = ownership.Owner{Cluster: "root:org:team-a", Group: "apps", Kind: "Deployment", Namespace: "ns", Name: "web", UID: "1b4e28ba-2fa1-11d2-883f-0016d3cca427"}

func TestSetOwnerGetOwnerRoundTrip(t *testing.T) {
	for _, cluster := range []multicluster.ClusterName{"", "east", "east.kubeconfig+east", multicluster.ClusterName(strings.Repeat("long-", 30))} {
		owner := testOwner
		owner.Cluster = cluster
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"keep": "me"}}}
		if err := ownership.SetOwner(cm, owner); err != nil {
			t.Fatalf("cluster %q: %v", cluster, err)
		}
		for k, v := range cm.Labels {
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				t.Errorf("cluster %q: label %s=%q: %v", cluster, k, v, errs)
			}
		}
		got, err := ownership.GetOwner(cm)
		if err != nil || got != owner {
			t.Errorf("cluster %q: GetOwner = %+v, %v; want %+v", cluster, got, err, owner)
		}
		if cm.Labels["keep"] != "me" {
			t.Errorf("cluster %q: SetOwner dropped a label", cluster)
		}
		if !owner.Owns(cm) {
			t.Errorf("cluster %q: Owns = false", cluster)
		}
	}
}

func TestClusterLabelValue(t *testing.T) {
	long := multicluster.ClusterName(strings.Repeat("a", 64))
	cases := map[multicluster.ClusterName]bool{"": true, "east": true, "root:org": false, "x+y": false, long: false}
	for cluster, asIs := range cases {
		got := ownership.ClusterLabelValue(cluster)
		if (got == string(cluster)) != asIs {
			t.Errorf("ClusterLabelValue(%q) = %q; as is: %v, want %v", cluster, got, got == string(cluster), asIs)
		}
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("ClusterLabelValue(%q) = %q: %v", cluster, got, errs)
		}
	}
	if ownership.ClusterLabelValue("root:a") == ownership.ClusterLabelValue("root:b") {
		t.Error("two clusters hash to one label value")
	}
}

func TestGetOwnerBadMarkings(t *testing.T) {
	marked := func() *corev1.ConfigMap {
		cm := &corev1.ConfigMap{}
		if err := ownership.SetOwner(cm, testOwner); err != nil {
			t.Fatal(err)
		}
		return cm
	}
	cases := map[string]func(*corev1.ConfigMap){
		"truncated annotation": func(cm *corev1.ConfigMap) {
			cm.Annotations[ownership.AnnotationOwner] = cm.Annotations[ownership.AnnotationOwner][:40]
		},
		"annotation missing": func(cm *corev1.ConfigMap) { delete(cm.Annotations, ownership.AnnotationOwner) },
		"no UID": func(cm *corev1.ConfigMap) {
			cm.Annotations[ownership.AnnotationOwner] = `{"cluster":"","kind":"ConfigMap","name":"x"}`
		},
		"UID label differs":     func(cm *corev1.ConfigMap) { cm.Labels[ownership.LabelOwnerUID] = "other" },
		"cluster label differs": func(cm *corev1.ConfigMap) { cm.Labels[ownership.LabelOwnerCluster] = "west" },
	}
	for name, damage := range cases {
		cm := marked()
		damage(cm)
		if _, err := ownership.GetOwner(cm); !errors.Is(err, ownership.ErrBadMarking) {
			t.Errorf("%s: GetOwner error %v, want ErrBadMarking", name, err)
		}
	}
	if _, err := ownership.GetOwner(&corev1.ConfigMap{}); !errors.Is(err, ownership.ErrNotMarked) {
		t.Errorf("unmarked: GetOwner error %v, want ErrNotMarked", err)
	}
}

func TestSetOwnerNeverAdopts(t *testing.T) {
	cm := &corev1.ConfigMap{}
	if err := ownership.SetOwner(cm, testOwner); err != nil {
		t.Fatal(err)
	}
	if err := ownership.SetOwner(cm, testOwner); err != nil {
		t.Fatalf("marking again with the same owner: %v", err)
	}
	successor := testOwner
	successor.UID = "9b4e28ba-2fa1-11d2-883f-0016d3cca427"
	if err := ownership.SetOwner(cm, successor); !errors.Is(err, ownership.ErrOwnedByAnother) {
		t.Fatalf("marking with a new owner of the same name: %v, want ErrOwnedByAnother", err)
	}
	if got, _ := ownership.GetOwner(cm); got != testOwner {
		t.Fatalf("the refused marking changed the object: %+v", got)
	}
	// A damaged marking of another UID is not taken over either.
	cm.Annotations[ownership.AnnotationOwner] = "{"
	if err := ownership.SetOwner(cm, successor); !errors.Is(err, ownership.ErrOwnedByAnother) {
		t.Fatalf("marking over a damaged marking of another UID: %v, want ErrOwnedByAnother", err)
	}
}

func TestOwnerOf(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", UID: "u-1"}}
	got, err := ownership.OwnerOf("east", cm, clientgoscheme.Scheme)
	want := ownership.Owner{Cluster: "east", Kind: "ConfigMap", Namespace: "ns", Name: "app", UID: "u-1"}
	if err != nil || got != want {
		t.Fatalf("OwnerOf = %+v, %v; want %+v", got, err, want)
	}
	cm.UID = ""
	if _, err := ownership.OwnerOf("east", cm, clientgoscheme.Scheme); err == nil {
		t.Fatal("OwnerOf accepted an owner without UID")
	}
}

func TestNewTrackerNeedsProjections(t *testing.T) {
	if _, err := ownership.NewTracker(nil, ownership.Options{}); err == nil {
		t.Fatal("NewTracker accepted Options without Projections")
	}
}
