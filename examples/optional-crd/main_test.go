// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/examples/internal/exampletest"
)

var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	exampletest.RunChild(run)
	os.Exit(exampletest.Main(m, &fleet, "a", "b"))
}

const ns = "shop"

// The Backup CRD only in a: b is engaged and its ConfigMaps are reconciled all the same, while
// the Backup watch and the field index are parked there, shown on /debug/fleet and in the
// metrics, and the fleet is ready. Once b gets the CRD, its Backups are watched, reconciled and
// found through the index, and nothing is parked any more.
func TestOptionalCRD(t *testing.T) {
	dir := t.TempDir()
	exampletest.WriteKubeconfig(t, dir, "a.kubeconfig", fleet.Member("a"))
	exampletest.WriteKubeconfig(t, dir, "b.kubeconfig", fleet.Member("b"))
	a, b := testClient(t, fleet.Member("a")), testClient(t, fleet.Member("b"))
	exampletest.InstallCRD(t, a, crd())
	for _, c := range []client.Client{a, b} {
		createTarget(t, c)
	}
	metricsAddr, probeAddr := freeAddress(t), freeAddress(t)
	p := exampletest.Start(t, func(ctx context.Context) error {
		return run(ctx, []string{
			"-kubeconfig", exampletest.WriteKubeconfig(t, t.TempDir(), "host.kubeconfig", fleet.Member("a")), "-fleet", dir + "/",
			"-metrics-bind-address", metricsAddr, "-health-probe-bind-address", probeAddr,
			"-parked-retry-max", "1s", "-zap-log-level", "error",
		})
	})
	p.Eventually(t, "creating a's Backup", createBackup(fleet.Member("a")))

	p.Eventually(t, "a's Backup reconciled", reconciled(a, "a.kubeconfig+a"))
	p.Eventually(t, "a's target annotated with its Backup, found through the index", annotated(a, "1"))
	p.Eventually(t, "b's target reconciled without the CRD", annotated(b, "0"))
	p.Eventually(t, "b's Backup watch and index parked", parked(metricsAddr, []string{
		"backup: kind source: *main.Backup",
		"field index spec.target of v1alpha1 Backup.examples.mcr.dev",
	}))
	p.Eventually(t, "the parked state in the metrics", metrics(metricsAddr,
		`mcr_parked_sources{controller="backup"} 1`, "mcr_parked_field_indexes 1"))
	p.Eventually(t, "the fleet ready on /readyz/fleet", ready(probeAddr))

	exampletest.InstallCRD(t, b, crd())
	p.Eventually(t, "creating b's Backup", createBackup(fleet.Member("b")))
	p.Eventually(t, "b's Backup reconciled", reconciled(b, "b.kubeconfig+b"))
	p.Eventually(t, "b's target annotated with its Backup, found through the index", annotated(b, "1"))
	p.Eventually(t, "nothing parked", parked(metricsAddr, nil))
	p.Eventually(t, "nothing parked in the metrics", metrics(metricsAddr,
		`mcr_parked_sources{controller="backup"} 0`, "mcr_parked_field_indexes 0"))
	p.Stop(t)
}

// The demo on its embedded fleet, as `go run ./optional-crd` runs it; in a process of its own,
// since the other test runs the same controller in this one. It fails unless both clusters'
// Backups were reconciled, checked in each cluster.
func TestOptionalCRDDemo(t *testing.T) {
	p := exampletest.StartChild(t, "-install-after", "0s", "-parked-retry-max", "1s",
		"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-zap-log-level", "error")
	if err := p.Wait(t, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	out := p.Output()
	for _, want := range []string{
		"b.kubeconfig+b does not serve Backups; parked until it does:\n  backup: kind source: *main.Backup\n",
		"b.kubeconfig+b serves Backups now",
		"a.kubeconfig+a: Backup demo/nightly Scheduled; ConfigMap demo/app-config examples.mcr.dev/backups=1",
		"b.kubeconfig+b: Backup demo/nightly Scheduled; ConfigMap demo/app-config examples.mcr.dev/backups=1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}

// testClient returns an admin client of the member that knows Backups and CRDs.
func testClient(t *testing.T, m *envtest.Member) client.Client {
	t.Helper()
	s, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(m.Config(), client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func createTarget(t *testing.T, c client.Client) {
	t.Helper()
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders", Labels: map[string]string{TargetLabel: "true"}}},
	} {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
}

// createBackup creates the Backup of "orders", with a new client each time: one whose REST
// mapper has looked for the kind before the CRD was discovered keeps not finding it.
func createBackup(m *envtest.Member) func(context.Context) error {
	return func(ctx context.Context) error {
		s, err := newScheme()
		if err != nil {
			return err
		}
		c, err := client.New(m.Config(), client.Options{Scheme: s})
		if err != nil {
			return err
		}
		backup := &Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders-nightly"}, Spec: BackupSpec{Target: "orders"}}
		if err := c.Create(ctx, backup); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	}
}

func reconciled(c client.Client, cluster string) func(context.Context) error {
	return func(ctx context.Context) error {
		b := &Backup{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "orders-nightly"}, b); err != nil {
			return err
		}
		if want := (BackupStatus{Phase: PhaseScheduled, Cluster: cluster}); b.Status != want {
			return fmt.Errorf("status %+v, want %+v", b.Status, want)
		}
		return nil
	}
}

func annotated(c client.Client, backups string) func(context.Context) error {
	return func(ctx context.Context) error {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "orders"}, cm); err != nil {
			return err
		}
		if got, ok := cm.Annotations[BackupsAnnotation]; !ok || got != backups {
			return fmt.Errorf("annotation %s is %q (set: %v), want %q", BackupsAnnotation, got, ok, backups)
		}
		return nil
	}
}

// parked checks the fleet debug endpoint: b has parked exactly want, a nothing.
func parked(metricsAddr string, want []string) func(context.Context) error {
	return func(ctx context.Context) error {
		body, err := get(ctx, "http://"+metricsAddr+"/debug/fleet?format=json")
		if err != nil {
			return err
		}
		var d mcmanager.FleetDebug
		if err := json.Unmarshal(body, &d); err != nil {
			return fmt.Errorf("decoding the fleet debug state: %w", err)
		}
		got := map[string][]string{}
		for _, c := range d.Clusters {
			got[string(c.Name)] = c.Parked
		}
		if _, ok := got["b.kubeconfig+b"]; !ok {
			return fmt.Errorf("b is not on the debug page: %s", body)
		}
		if !slices.Equal(got["b.kubeconfig+b"], want) || len(got["a.kubeconfig+a"]) != 0 {
			return fmt.Errorf("parked %q, want %q on b and nothing on a", got, want)
		}
		return nil
	}
}

// metrics checks that the metrics endpoint shows every line of want.
func metrics(metricsAddr string, want ...string) func(context.Context) error {
	return func(ctx context.Context) error {
		body, err := get(ctx, "http://"+metricsAddr+"/metrics")
		if err != nil {
			return err
		}
		lines := strings.Split(string(body), "\n")
		for _, w := range want {
			if !slices.Contains(lines, w) {
				return fmt.Errorf("no line %q in the metrics", w)
			}
		}
		return nil
	}
}

func ready(probeAddr string) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := get(ctx, "http://"+probeAddr+"/readyz/fleet")
		return err
	}
}

// get returns the body of a GET of url, or an error unless the status is 200.
func get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return body, nil
}

func freeAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
