// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Index is a field index recorded by IndexField, to be applied to every cluster.
type Index struct {
	// Object is the type of object the index is on.
	Object client.Object
	// Field is the name of the indexed field, as used in client.MatchingFields.
	Field string
	// Extractor returns the values of Field for an object.
	Extractor client.IndexerFunc
}

// Key identifies the cache index this Index creates. Two Indexes with the same key would be the
// same index on a controller-runtime cache, and applying both fails with an "indexer conflict";
// Clusters (and the providers in this module) therefore apply only the first of them.
//
// Typed objects are keyed by their Go type, which determines their kind under any scheme.
// Unstructured and metadata-only objects are keyed by their GroupVersionKind, because the cache
// keeps separate informers for them.
func (i Index) Key() string {
	var kind string
	switch obj := i.Object.(type) {
	case runtime.Unstructured:
		kind = "unstructured:" + obj.GetObjectKind().GroupVersionKind().String()
	case *metav1.PartialObjectMetadata:
		kind = "metadata:" + obj.GroupVersionKind().String()
	default:
		kind = "typed:" + reflect.TypeOf(i.Object).String()
	}
	return fmt.Sprintf("%s/%s", kind, i.Field)
}
