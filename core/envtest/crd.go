// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SchemalessCRD returns the CustomResourceDefinition of a namespaced kind whose objects may hold
// any fields, ready to create in a member with any client: for tests that need a kind some
// members serve and others do not (yet). plural is the resource name; the CRD is named
// <plural>.<group> and serves and stores gvk's version.
func SchemalessCRD(gvk schema.GroupVersionKind, plural string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + gvk.Group},
		"spec": map[string]any{
			"group": gvk.Group,
			"scope": "Namespaced",
			"names": map[string]any{
				"plural": plural, "singular": strings.ToLower(gvk.Kind),
				"kind": gvk.Kind, "listKind": gvk.Kind + "List",
			},
			"versions": []any{map[string]any{
				"name": gvk.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
}

// crdGVK is the kind InstallCRDs sends and reads.
var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// crdPollInterval is how often InstallCRDs reads a CRD's status: a member establishes a new CRD
// within a second or so.
const crdPollInterval = 50 * time.Millisecond

// InstallCRDs creates the CustomResourceDefinitions crds with c and waits until the member
// serves every one of them (condition Established), for as long as ctx allows: give it a
// deadline. A CRD that exists already is only waited for, so installing twice is fine. A CRD
// whose names another CRD of its group has taken (NamesAccepted=False) would never be served:
// InstallCRDs fails at once with the member's reason instead of waiting for ctx to end.
//
// crds may be typed (*apiextensionsv1.CustomResourceDefinition, whose TypeMeta may be empty)
// or unstructured, such as SchemalessCRD's. They are sent and read as unstructured objects, so
// c's scheme need not know apiextensions.k8s.io; crds themselves are not modified.
//
// Objects of the new kinds can be created as soon as InstallCRDs returns. kube-apiserver holds
// back each create of a kind for two seconds while its CRD is less than two seconds established
// (for the sake of HA setups); InstallCRDs leaves that pause to the first creates.
func InstallCRDs(ctx context.Context, c client.Client, crds ...client.Object) error {
	// Create all before waiting for any: the member establishes them side by side.
	names := make([]string, 0, len(crds))
	for _, obj := range crds {
		crd, err := unstructuredCRD(obj)
		if err != nil {
			return err
		}
		if err := c.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("envtest: creating CRD %s: %w", crd.GetName(), withContextError(ctx, err))
		}
		names = append(names, crd.GetName())
	}
	for _, name := range names {
		if err := waitEstablished(ctx, c, name); err != nil {
			return err
		}
	}
	return nil
}

// unstructuredCRD returns a copy of obj as an unstructured CustomResourceDefinition. The copy
// goes through JSON: hand-written unstructured CRDs often hold plain ints, which
// Unstructured.DeepCopy refuses.
func unstructuredCRD(obj client.Object) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("envtest: CRD %s: %w", obj.GetName(), err)
	}
	crd := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(data, &crd.Object); err != nil {
		return nil, fmt.Errorf("envtest: CRD %s: %w", obj.GetName(), err)
	}
	switch crd.GroupVersionKind() {
	case crdGVK:
	case schema.GroupVersionKind{}:
		// Typed objects usually leave their TypeMeta to the scheme.
		crd.SetGroupVersionKind(crdGVK)
	default:
		return nil, fmt.Errorf("envtest: %s %s %s is not a CustomResourceDefinition of %s",
			crd.GetAPIVersion(), crd.GetKind(), crd.GetName(), crdGVK.GroupVersion())
	}
	return crd, nil
}

// waitEstablished polls the CRD called name until it is Established, its names are refused, or
// ctx ends.
func waitEstablished(ctx context.Context, c client.Client, name string) error {
	for {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(crdGVK)
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return fmt.Errorf("envtest: reading CRD %s: %w", name, withContextError(ctx, err))
		}
		if status, _ := crdCondition(crd, "Established"); status == "True" {
			return nil
		}
		if status, message := crdCondition(crd, "NamesAccepted"); status == "False" {
			return fmt.Errorf("envtest: CRD %s: names not accepted: %s", name, message)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("envtest: CRD %s not established: %w", name, ctx.Err())
		case <-time.After(crdPollInterval):
		}
	}
}

// crdCondition returns the status and message of the CRD's condition of type condType, or
// empty strings if it has none (yet).
func crdCondition(crd *unstructured.Unstructured, condType string) (status, message string) {
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conditions {
		if c, ok := c.(map[string]any); ok && c["type"] == condType {
			status, _ = c["status"].(string)
			message, _ = c["message"].(string)
			return status, message
		}
	}
	return "", ""
}

// withContextError returns err, wrapping ctx's error as well once ctx has ended, so that callers
// can tell a deadline from a refusal with errors.Is whatever the client made of the request.
func withContextError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("%w: %w", ctxErr, err)
	}
	return err
}
