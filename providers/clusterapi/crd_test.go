// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"mcr.dev/core/envtest"
)

// capiModule is the Cluster API module whose CRDs the tests install; its version is the one of
// the API types the provider is built with (sigs.k8s.io/cluster-api/api), so the CRDs always
// match the types.
const (
	capiModule    = "sigs.k8s.io/cluster-api"
	capiAPIModule = "sigs.k8s.io/cluster-api/api"
	// capiFallbackVersion is used when the build info of the test binary does not say.
	capiFallbackVersion = "v1.14.2"
	// clusterCRDFile is the Cluster CRD inside the cluster-api module.
	clusterCRDFile = "core/config/crd/bases/cluster.x-k8s.io_clusters.yaml"
)

// capiVersion returns the version of the Cluster API types linked into the test binary.
func capiVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == capiAPIModule {
				if dep.Replace != nil {
					return dep.Replace.Version
				}
				return dep.Version
			}
		}
	}
	return capiFallbackVersion
}

// capiModuleDir returns the directory of the cluster-api module in the module cache, downloading
// it through the Go module proxy when it is missing. The provider module does not require it:
// its go.mod pins newer Ginkgo and Gomega than this workspace uses, and only its CRD files are
// needed here.
func capiModuleDir(ctx context.Context, version string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMODCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), capiModule+"@"+version)
	if _, err := os.Stat(filepath.Join(dir, clusterCRDFile)); err == nil {
		return dir, nil
	}
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", capiModule+"@"+version)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err = cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", capiModule, version, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", capiModule, version, err)
	}
	if info.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", capiModule, version, info.Error)
	}
	return info.Dir, nil
}

// loadClusterCRD reads the Cluster CRD shipped in the cluster-api module.
func loadClusterCRD(ctx context.Context) (*apiextensionsv1.CustomResourceDefinition, error) {
	version := capiVersion()
	dir, err := capiModuleDir(ctx, version)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, clusterCRDFile))
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		return nil, fmt.Errorf("decoding %s of %s@%s: %w", clusterCRDFile, capiModule, version, err)
	}
	return crd, nil
}

// installClusterCRD installs the Cluster CRD on the apiserver of cfg with conversion through
// the webhook at url (whose serving certificate caPEM verifies), as Cluster API's core
// controller serves it, and waits until the CRD is established.
func installClusterCRD(ctx context.Context, cfg *rest.Config, url string, caPEM []byte) error {
	crd, err := loadClusterCRD(ctx)
	if err != nil {
		return err
	}
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			ConversionReviewVersions: []string{"v1"},
		},
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	return envtest.InstallCRDs(ctx, c, crd)
}

// startConversionWebhook serves CRD conversion between the Cluster API versions with Cluster
// API's own conversion functions (registered in scheme by the api module), over TLS on
// 127.0.0.1. It returns the server and the PEM of its certificate.
func startConversionWebhook(scheme *runtime.Scheme) (*httptest.Server, []byte) {
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review apiextensionsv1.ConversionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "malformed ConversionReview", http.StatusBadRequest)
			return
		}
		resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
		for _, in := range review.Request.Objects {
			out, err := convertObject(scheme, decoder, in.Raw, review.Request.DesiredAPIVersion)
			if err != nil {
				resp.ConvertedObjects = nil
				resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
				break
			}
			resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: out})
		}
		review.Request, review.Response = nil, resp
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	}))
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return srv, caPEM
}

func convertObject(scheme *runtime.Scheme, decoder runtime.Decoder, raw []byte, desired string) ([]byte, error) {
	obj, gvk, err := decoder.Decode(raw, nil, nil)
	if err != nil {
		return nil, err
	}
	gv, err := schema.ParseGroupVersion(desired)
	if err != nil {
		return nil, err
	}
	target, err := scheme.New(gv.WithKind(gvk.Kind))
	if err != nil {
		return nil, err
	}
	if err := scheme.Convert(obj, target, nil); err != nil {
		return nil, fmt.Errorf("converting %s to %s: %w", gvk, desired, err)
	}
	target.GetObjectKind().SetGroupVersionKind(gv.WithKind(gvk.Kind))
	return json.Marshal(target)
}
