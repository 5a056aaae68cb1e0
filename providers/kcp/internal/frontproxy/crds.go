// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package frontproxy

import (
	"context"
	"embed"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

//go:embed crds/*.yaml
var crdFiles embed.FS

// CRD files, for InstallCRDs.
const (
	// APIExportEndpointSlicesCRD is apis.kcp.io/v1alpha1 APIExportEndpointSlice, for the
	// workspace a provider's config points at.
	APIExportEndpointSlicesCRD = "crds/apis.kcp.io_apiexportendpointslices.yaml"
	// APIBindingsCRD is apis.kcp.io/v1alpha1 APIBinding, for the backends of a shard.
	APIBindingsCRD = "crds/apis.kcp.io_apibindings.yaml"
)

// InstallCRDs creates the given CRD files (or updates them) on the apiserver cfg points at and
// waits until they are established.
func InstallCRDs(ctx context.Context, cfg *rest.Config, files ...string) error {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	for _, file := range files {
		data, err := crdFiles.ReadFile(file)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return fmt.Errorf("decoding %s: %w", file, err)
		}
		if err := c.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating CRD %s: %w", crd.Name, err)
		}
		err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(crd), got); err != nil {
				return false, nil //nolint:nilerr // not there yet
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for CRD %s to be established: %w", crd.Name, err)
		}
	}
	return nil
}
