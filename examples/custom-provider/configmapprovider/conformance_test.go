// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package configmapprovider_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/conformance"
	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/examples/custom-provider/configmapprovider"
)

// One fleet per test binary: "hub" holds the ConfigMap, m1 and m2 serve the members the
// conformance suite creates.
var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	f, err := envtest.Start(ctx, envtest.Options{Members: []string{"hub", "m1", "m2"}})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fleet = f
	code := m.Run()
	if err := f.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// snippet:begin provider-conformance

// TestConformance runs the mcr conformance suite against the provider. The KubeconfigHarness
// creates members with credentials of their own on the fleet's apiservers; the provider author
// only says how to write and delete a member's entry in the source of truth: a key of the
// ConfigMap.
func TestConformance(t *testing.T) {
	hub, err := client.New(fleet.Member("hub").Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "conformance"}}
	if err := hub.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: ns.Name, Name: configmapprovider.DefaultName}
	// edit changes the ConfigMap, creating it if needed; the suite writes members concurrently.
	edit := func(ctx context.Context, change func(*corev1.ConfigMap)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cm := &corev1.ConfigMap{}
			err := hub.Get(ctx, key, cm)
			if apierrors.IsNotFound(err) {
				cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
				change(cm)
				return hub.Create(ctx, cm)
			}
			if err != nil {
				return err
			}
			change(cm)
			return hub.Update(ctx, cm)
		})
	}

	// The provider's log lines and Events, which must never quote a member's credentials.
	logs := &providertest.LogBuffer{}
	// The provider reaches the hub through a forwarder, which SourceOutage takes down and up
	// again: to the provider, the hub's apiserver restarts.
	hubLink := envtest.StartForwarderForTest(t, fleet.Member("hub"))
	hubConfig := rest.CopyConfig(fleet.Member("hub").Config())
	hubConfig.Host = hubLink.URL()
	harness := &conformance.KubeconfigHarness{
		Fleet: conformance.NewFleet(fleet.Member("m1"), fleet.Member("m2")),
		Provider: func(context.Context) (multicluster.Provider, error) {
			return configmapprovider.New(hubConfig, configmapprovider.Options{
				Namespace: ns.Name,
				Options: kit.Options{RetryMaxDelay: 2 * time.Second, CacheSyncTimeout: 20 * time.Second, Logger: logs.Logger(),
					ResyncPeriod: 2 * time.Second},
			})
		},
		Write: func(ctx context.Context, name string, kubeconfig []byte) error {
			return edit(ctx, func(cm *corev1.ConfigMap) {
				if cm.Data == nil {
					cm.Data = map[string]string{}
				}
				cm.Data[name] = string(kubeconfig)
			})
		},
		Delete: func(ctx context.Context, name string) error {
			return edit(ctx, func(cm *corev1.ConfigMap) { delete(cm.Data, name) })
		},
		SourceOutage: func(context.Context) (func(context.Context) error, error) {
			hubLink.Down()
			return func(context.Context) error { return hubLink.Up() }, nil
		},
		Resync: 2 * time.Second,
		ProviderReports: func(ctx context.Context) ([]string, error) {
			events, err := conformance.EventTexts(ctx, hub, ns.Name)
			return append(logs.Lines(), events...), err
		},
		// A change of the ConfigMap that is not a change of the member: an annotation.
		Update: func(ctx context.Context, name string) error {
			return edit(ctx, func(cm *corev1.ConfigMap) {
				metav1.SetMetaDataAnnotation(&cm.ObjectMeta, "conformance.mcr.dev/touched", name+"@"+time.Now().Format(time.RFC3339Nano))
			})
		},
	}

	conformance.Run(t, harness, conformance.Options{
		Features: []conformance.Feature{conformance.CredentialRotation, conformance.EngageErrorRecovery, conformance.UnresponsiveMembers,
			conformance.CredentialHygiene, conformance.SourceRestart, conformance.PeriodicResync},
		Implementation: conformance.Implementation{
			Organization: "mcr examples",
			Project:      "mcr.dev/examples/custom-provider/configmapprovider",
		},
		// Shorter than the defaults, to keep the examples' tests quick; the waits still bound
		// everything generously.
		Timeouts:   conformance.Timeouts{Stable: 2 * time.Second},
		LeakCycles: 2,
	})
}

// snippet:end provider-conformance
