// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package ownership

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"mcr.dev/core/multicluster"
)

// The marking of a projection.
const (
	// LabelOwnerUID holds the owner's UID: projections of one owner are listed by it.
	LabelOwnerUID = "ownership.mcr.dev/owner-uid"
	// LabelOwnerCluster holds the owner's cluster, as ClusterLabelValue gives it.
	LabelOwnerCluster = "ownership.mcr.dev/owner-cluster"
	// AnnotationOwner holds the full Owner as JSON.
	AnnotationOwner = "ownership.mcr.dev/owner"
)

var (
	// ErrNotMarked is returned by GetOwner for an object without the marking.
	ErrNotMarked = errors.New("object has no ownership marking")
	// ErrBadMarking is returned by GetOwner for a marking that is malformed, truncated or
	// inconsistent (labels that disagree with the annotation).
	ErrBadMarking = errors.New("bad ownership marking")
	// ErrOwnedByAnother is returned by SetOwner for an object another owner holds.
	ErrOwnedByAnother = errors.New("object is owned by another owner")
)

// Owner is the full reference to the owner of a projection.
type Owner struct {
	// Cluster is the owner's cluster; LocalCluster ("") is the local cluster.
	Cluster   multicluster.ClusterName `json:"cluster"`
	Group     string                   `json:"group,omitempty"`
	Kind      string                   `json:"kind"`
	Namespace string                   `json:"namespace,omitempty"`
	Name      string                   `json:"name"`
	UID       types.UID                `json:"uid"`
}

// OwnerOf returns the reference to obj of cluster. Its group and kind come from obj's type
// meta, or from scheme when that is empty (typed objects read through a client).
func OwnerOf(cluster multicluster.ClusterName, obj client.Object, scheme *runtime.Scheme) (Owner, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		var err error
		if gvk, err = apiutil.GVKForObject(obj, scheme); err != nil {
			return Owner{}, fmt.Errorf("ownership: kind of the owner: %w", err)
		}
	}
	o := Owner{Cluster: cluster, Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()}
	if err := o.validate(); err != nil {
		return Owner{}, fmt.Errorf("ownership: %w", err)
	}
	return o, nil
}

// GroupKind returns the owner's group and kind.
func (o Owner) GroupKind() schema.GroupKind { return schema.GroupKind{Group: o.Group, Kind: o.Kind} }

// Key returns the owner's namespace and name.
func (o Owner) Key() client.ObjectKey { return client.ObjectKey{Namespace: o.Namespace, Name: o.Name} }

// String names the owner for logs and errors.
func (o Owner) String() string {
	return fmt.Sprintf("%s %s in cluster %q (uid %s)", o.GroupKind(), o.Key(), o.Cluster, o.UID)
}

// Owns reports whether obj carries a valid marking of o (the same UID and cluster).
func (o Owner) Owns(obj client.Object) bool {
	got, err := GetOwner(obj)
	return err == nil && got.UID == o.UID && got.Cluster == o.Cluster
}

// Selector selects the projections of o, for List.
func (o Owner) Selector() client.MatchingLabels {
	return client.MatchingLabels{LabelOwnerUID: string(o.UID), LabelOwnerCluster: ClusterLabelValue(o.Cluster)}
}

func (o Owner) validate() error {
	switch {
	case o.Kind == "":
		return errors.New("owner has no kind")
	case o.Name == "":
		return errors.New("owner has no name")
	case o.UID == "":
		return fmt.Errorf("owner %s has no UID (read it from the API server first)", o.Key())
	}
	if errs := validation.IsValidLabelValue(string(o.UID)); len(errs) > 0 {
		return fmt.Errorf("owner UID %q is no label value: %v", o.UID, errs)
	}
	return nil
}

// ClusterLabelValue is the value of LabelOwnerCluster for cluster: the name itself when it is
// a valid label value (at most 63 characters of [A-Za-z0-9_.-], alphanumeric at both ends; the
// local cluster's "" included), otherwise "h-" and the first 40 hex digits of its SHA-256.
func ClusterLabelValue(cluster multicluster.ClusterName) string {
	if len(validation.IsValidLabelValue(string(cluster))) == 0 {
		return string(cluster)
	}
	sum := sha256.Sum256([]byte(cluster))
	return "h-" + hex.EncodeToString(sum[:])[:40]
}

// SetOwner marks obj as a projection of owner. It returns ErrOwnedByAnother, and leaves obj as
// it is, when obj is marked already with another owner or another owner's UID: an object a
// former owner of the same name left behind is never adopted. Marking again with the same owner
// is a no-op.
func SetOwner(obj client.Object, owner Owner) error {
	if err := owner.validate(); err != nil {
		return fmt.Errorf("ownership: %w", err)
	}
	if current, err := GetOwner(obj); err == nil && current != owner {
		return fmt.Errorf("%w: %s is marked with %s, not %s", ErrOwnedByAnother, client.ObjectKeyFromObject(obj), current, owner)
	} else if errors.Is(err, ErrBadMarking) && obj.GetLabels()[LabelOwnerUID] != "" && obj.GetLabels()[LabelOwnerUID] != string(owner.UID) {
		return fmt.Errorf("%w: %s has the UID label of %s", ErrOwnedByAnother, client.ObjectKeyFromObject(obj), obj.GetLabels()[LabelOwnerUID])
	}
	ref, err := json.Marshal(owner)
	if err != nil {
		return fmt.Errorf("ownership: %w", err)
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelOwnerUID] = string(owner.UID)
	labels[LabelOwnerCluster] = ClusterLabelValue(owner.Cluster)
	obj.SetLabels(labels)
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationOwner] = string(ref)
	obj.SetAnnotations(annotations)
	return nil
}

// GetOwner reads the marking of obj. It returns ErrNotMarked when obj has none, and an error
// wrapping ErrBadMarking when the annotation is malformed or truncated, lacks a field, or
// disagrees with the labels.
func GetOwner(obj client.Object) (Owner, error) {
	ref, hasRef := obj.GetAnnotations()[AnnotationOwner]
	uid, hasUID := obj.GetLabels()[LabelOwnerUID]
	if !hasRef && !hasUID {
		return Owner{}, ErrNotMarked
	}
	bad := func(format string, args ...any) (Owner, error) {
		return Owner{}, fmt.Errorf("%w on %s: %s", ErrBadMarking, client.ObjectKeyFromObject(obj), fmt.Sprintf(format, args...))
	}
	if !hasRef {
		return bad("label %s without annotation %s", LabelOwnerUID, AnnotationOwner)
	}
	var o Owner
	if err := json.Unmarshal([]byte(ref), &o); err != nil {
		return bad("annotation %s: %v", AnnotationOwner, err)
	}
	if err := o.validate(); err != nil {
		return bad("annotation %s: %v", AnnotationOwner, err)
	}
	if uid != string(o.UID) {
		return bad("label %s=%q, annotation names UID %q", LabelOwnerUID, uid, o.UID)
	}
	if got, want := obj.GetLabels()[LabelOwnerCluster], ClusterLabelValue(o.Cluster); got != want {
		return bad("label %s=%q, annotation names cluster %q (label value %q)", LabelOwnerCluster, got, o.Cluster, want)
	}
	return o, nil
}
