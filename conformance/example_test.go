// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"mcr.dev/conformance"
	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
)

// newSecretProvider stands for the constructor of the provider under test: here, a provider
// that engages one cluster per kubeconfig Secret in a namespace of a host cluster.
var newSecretProvider func(host *rest.Config, namespace string) (multicluster.Provider, error)

// The whole harness of a provider whose source of truth is kubeconfig Secrets: a fleet of real
// apiservers backs the members, and the harness writes and deletes one Secret per member. In a
// provider module, the fleet comes from envtest.StartForTest and the last lines are the body of
// TestConformance in conformance_test.go.
func Example() {
	fleet, err := envtest.Start(context.Background(), envtest.Options{Members: []string{"host", "m1", "m2", "m3"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = fleet.Stop() }()
	host, err := client.New(fleet.Member("host").Config(), client.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	secret := func(name string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	}
	harness := &conformance.KubeconfigHarness{
		Fleet: conformance.NewFleet(fleet.Member("m1"), fleet.Member("m2"), fleet.Member("m3")),
		Provider: func(context.Context) (multicluster.Provider, error) {
			return newSecretProvider(fleet.Member("host").Config(), "default")
		},
		Write: func(ctx context.Context, name string, kubeconfig []byte) error {
			s := secret(name)
			_, err := controllerutil.CreateOrUpdate(ctx, host, s, func() error {
				s.Data = map[string][]byte{"kubeconfig": kubeconfig}
				return nil
			})
			return err
		},
		Delete: func(ctx context.Context, name string) error {
			return client.IgnoreNotFound(host.Delete(ctx, secret(name)))
		},
	}
	testConformance := func(t *testing.T) {
		conformance.Run(t, harness, conformance.Options{
			Features:       []conformance.Feature{conformance.CredentialRotation, conformance.Scale},
			Implementation: conformance.Implementation{Organization: "acme", Project: "secret-provider", Version: "v0.1.0"},
		})
	}
	_ = testConformance
}

// iterateOnOneTest runs a single test, with a shorter engage wait, while debugging it; the
// comment shows how a slow provider gets more time. docs/conformance.md quotes it.
func iterateOnOneTest(t *testing.T, harness conformance.Harness) {
	conformance.Run(t, harness, conformance.Options{
		Only:     []string{conformance.EngageOnAdd},
		Timeouts: conformance.Timeouts{Engage: 30 * time.Second},
		// For a slow provider: Timeouts{Run: 25 * time.Minute} and go test -timeout 30m.
	})
}

var _ = iterateOnOneTest

// snippet:begin kind-fleet

// conformanceFleet returns the Fleet the suite's members live on: the existing clusters named
// by the kubeconfig contexts in CONFORMANCE_CONTEXTS (comma-separated; KUBECONFIG or
// ~/.kube/config holds them), or else three apiservers of the envtest fleet.
func conformanceFleet(t *testing.T, local *envtest.Fleet) *conformance.Fleet {
	contexts := os.Getenv("CONFORMANCE_CONTEXTS")
	if contexts == "" {
		return conformance.NewFleet(local.Member("m1"), local.Member("m2"), local.Member("m3"))
	}
	var clusters []conformance.KubeconfigCluster
	for _, name := range strings.Split(contexts, ",") {
		clusters = append(clusters, conformance.KubeconfigCluster{Context: strings.TrimSpace(name)})
	}
	// Checks each cluster's version and the user's permissions, and removes what an earlier,
	// killed run left there.
	f, err := conformance.NewFleetFromKubeconfigs(t.Context(), clusters...)
	if err != nil {
		t.Fatal(err)
	}
	// Removes the suite's namespace, ServiceAccounts and bindings again (the end of t.Context()
	// or SIGINT/SIGTERM do too).
	t.Cleanup(func() {
		if err := f.Close(context.WithoutCancel(t.Context())); err != nil {
			t.Error(err)
		}
	})
	return f
}

// snippet:end kind-fleet

var _ = conformanceFleet

// snippet:begin readiness-harness

// readyHarness adds MemberReadiness to a KubeconfigHarness whose entries are Secrets: the
// provider reads readiness from the Secret's "ready" annotation. SetReady changes only the
// annotation; Write, which also runs for a rotation, keeps whatever readiness the entry has and
// makes new entries ready, so that a rotation never undoes a SetReady.
type readyHarness struct {
	*conformance.KubeconfigHarness
	host client.Client
}

var _ conformance.ReadinessToggler = readyHarness{}

const readyAnnotation = "example.com/ready"

func (h readyHarness) SetReady(ctx context.Context, m conformance.Member, ready bool) error {
	s := &corev1.Secret{}
	if err := h.host.Get(ctx, client.ObjectKey{Namespace: "default", Name: m.ID}, s); err != nil {
		return err
	}
	metav1.SetMetaDataAnnotation(&s.ObjectMeta, readyAnnotation, fmt.Sprint(ready))
	return h.host.Update(ctx, s)
}

// write is the harness's Write.
func (h readyHarness) write(ctx context.Context, name string, kubeconfig []byte) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	_, err := controllerutil.CreateOrUpdate(ctx, h.host, s, func() error {
		if _, set := s.Annotations[readyAnnotation]; !set {
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, readyAnnotation, "true")
		}
		s.Data = map[string][]byte{"kubeconfig": kubeconfig}
		return nil
	})
	return err
}

// snippet:end readiness-harness

// newReadyHarness wires readyHarness: Write must be the method, so that rotations keep
// readiness.
func newReadyHarness(fleet *conformance.Fleet, host client.Client, provider func(context.Context) (multicluster.Provider, error)) readyHarness {
	h := readyHarness{KubeconfigHarness: &conformance.KubeconfigHarness{Fleet: fleet, Provider: provider}, host: host}
	h.Write = h.write
	h.Delete = func(ctx context.Context, name string) error {
		return client.IgnoreNotFound(host.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}))
	}
	return h
}

var _ = newReadyHarness
