// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"mcr.dev/core/multicluster"
)

// ClusterResolver tells which cluster an admission request came from, for webhooks whose
// clusters all call one path (Options.ClusterResolver). An error means it cannot tell; the
// webhook then answers as Options.UnknownCluster says.
type ClusterResolver func(ctx context.Context, req admission.Request) (multicluster.ClusterName, error)

const (
	// KCPClusterAnnotation is the annotation kcp keeps on every object with the name of the
	// logical cluster it lives in (logicalcluster.AnnotationKey). kcp sets it on the object of a
	// CREATE before it calls webhooks.
	KCPClusterAnnotation = "kcp.io/cluster"
	// KCPClusterNameExtra is the user-info extra in which kcp's workspace authenticators put the
	// logical cluster a request is for.
	KCPClusterNameExtra = "authentication.kcp.io/cluster-name"
)

// KCPClusterResolver resolves the logical cluster of a request kcp sent to a webhook: the
// KCPClusterAnnotation of the object (of the old object for DELETE, which has none), else the
// single value of the requesting user's KCPClusterNameExtra. The name is the logical cluster
// name, which is how the kcp provider (mcr.dev/providers/kcp) names its clusters.
func KCPClusterResolver(ctx context.Context, req admission.Request) (multicluster.ClusterName, error) {
	name, err := AnnotationClusterResolver(KCPClusterAnnotation)(ctx, req)
	if err == nil {
		return name, nil
	}
	if values := req.UserInfo.Extra[KCPClusterNameExtra]; len(values) == 1 && values[0] != "" {
		return multicluster.ClusterName(values[0]), nil
	}
	return "", fmt.Errorf("%w, and the user has no %s extra", err, KCPClusterNameExtra)
}

// AnnotationClusterResolver returns a resolver that reads the cluster from the annotation key
// of the request's object, or of its old object when the object has none (DELETE).
func AnnotationClusterResolver(key string) ClusterResolver {
	return func(_ context.Context, req admission.Request) (multicluster.ClusterName, error) {
		for _, raw := range []runtime.RawExtension{req.Object, req.OldObject} {
			value, err := annotation(raw, key)
			if err != nil {
				return "", err
			}
			if value != "" {
				return multicluster.ClusterName(value), nil
			}
		}
		return "", fmt.Errorf("%s %s has no %s annotation", req.Kind.Kind, objectRef(req), key)
	}
}

// annotation returns the value of the annotation key of raw's object, "" when it has none.
func annotation(raw runtime.RawExtension, key string) (string, error) {
	if raw.Object != nil {
		accessor, err := meta.Accessor(raw.Object)
		if err != nil {
			return "", fmt.Errorf("reading annotations: %w", err)
		}
		return accessor.GetAnnotations()[key], nil
	}
	if len(raw.Raw) == 0 {
		return "", nil
	}
	var obj struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw.Raw, &obj); err != nil {
		return "", fmt.Errorf("reading annotations: %w", err)
	}
	return obj.Metadata.Annotations[key], nil
}

// objectRef names the object of a request in messages: namespace/name, or name.
func objectRef(req admission.Request) string {
	if req.Namespace == "" {
		return req.Name
	}
	return req.Namespace + "/" + req.Name
}
