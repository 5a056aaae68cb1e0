// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mcr "mcr.dev/core"
	"mcr.dev/core/envtest"
	mcmanager "mcr.dev/core/manager"
)

// The demo's objects: a backup target in every member, a Backup of it where the CRD is installed.
const (
	demoNamespace = "demo"
	demoTarget    = "app-config"
	demoBackup    = "nightly"
)

// stepTimeout bounds each wait of the script: for a watch to be parked, to start, for a Backup
// to be reconciled.
const stepTimeout = 2 * time.Minute

// embeddedFleet starts two local clusters, a and b, and writes their kubeconfigs into a new
// temporary directory, where the file provider finds them.
func embeddedFleet(ctx context.Context) (dir string, fleet *envtest.Fleet, err error) {
	fmt.Printf("Starting an embedded fleet of 2 clusters (kube-apiserver %s)...\n", envtest.KubernetesVersion)
	if fleet, err = envtest.Start(ctx, envtest.Options{Members: []string{"a", "b"}}); err != nil {
		return "", nil, fmt.Errorf("starting the embedded fleet: %w", err)
	}
	if dir, err = os.MkdirTemp("", "mcr-optional-crd-"); err != nil {
		return "", nil, errors.Join(err, fleet.Stop())
	}
	for _, m := range fleet.Members() {
		// Admin credentials: readable by this user only.
		if err := os.WriteFile(filepath.Join(dir, m.Name()+".kubeconfig"), m.Kubeconfig(), 0o600); err != nil {
			return "", nil, errors.Join(err, fleet.Stop(), os.RemoveAll(dir))
		}
	}
	return dir, fleet, nil
}

// clusterName is the file provider's name of an embedded member: <file>+<context>.
func clusterName(m *envtest.Member) string { return m.Name() + ".kubeconfig+" + m.Name() }

// target returns the demo's namespace and backup target.
func target() []client.Object {
	return []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: demoNamespace}},
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: demoNamespace, Name: demoTarget, Labels: map[string]string{TargetLabel: "true"}},
			Data:       map[string]string{"greeting": "hello"},
		},
	}
}

// create creates the objects in the cluster of cfg unless they exist. A kind whose CRD was just
// established may not be discovered yet: it is retried with a new client.
func create(ctx context.Context, cfg *rest.Config, objs ...client.Object) error {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	for {
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return err
		}
		for _, obj := range objs {
			if err = c.Create(ctx, obj.DeepCopyObject().(client.Object)); apierrors.IsAlreadyExists(err) {
				err = nil
			}
			if err != nil {
				break
			}
		}
		if !meta.IsNoMatchError(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%w)", err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// install installs the CRD in the cluster and, with backup, creates the demo's Backup there.
func install(ctx context.Context, name string, cfg *rest.Config, backup bool) error {
	if err := installCRD(ctx, cfg); err != nil {
		return fmt.Errorf("cluster %s: %w", name, err)
	}
	fmt.Printf("Installed the Backup CRD in %s.\n", name)
	if !backup {
		return nil
	}
	b := &Backup{
		ObjectMeta: metav1.ObjectMeta{Namespace: demoNamespace, Name: demoBackup},
		Spec:       BackupSpec{Target: demoTarget, Schedule: "0 3 * * *"},
	}
	if err := create(ctx, cfg, b); err != nil {
		return fmt.Errorf("creating Backup %s/%s in %s: %w", demoNamespace, demoBackup, name, err)
	}
	return nil
}

// script is what the command does beside running the manager: it installs the CRD in clusters
// once their Backup watch is parked, and, in the demo, checks the outcome in every cluster.
type script struct {
	mgr     mcr.Manager
	stopped <-chan struct{} // closed when the manager has stopped
	configs map[mcr.ClusterName]*rest.Config
	seed    bool // create the demo's Backup wherever the CRD is installed
}

// installLater waits until the Backup watch of each cluster of names is parked there, says so,
// installs the CRD there after a while, and waits until nothing is parked there any more.
func (s script) installLater(ctx context.Context, names []string, after time.Duration, metricsAddr string) error {
	if len(names) == 0 {
		return nil
	}
	for _, name := range names {
		var parked []string
		if err := s.wait(ctx, name+"'s Backup watch parked", func() bool {
			parked = s.parked(name)
			return len(parked) == 2 // the Backup watch and the field index
		}); err != nil {
			return err
		}
		fmt.Printf("%s does not serve Backups; parked until it does:\n  %s\n", name, strings.Join(parked, "\n  "))
	}
	if metricsAddr != "0" {
		if strings.HasPrefix(metricsAddr, ":") {
			metricsAddr = "localhost" + metricsAddr
		}
		fmt.Printf("The fleet debug page shows them: curl -s http://%s/debug/fleet\n", metricsAddr)
	}
	fmt.Printf("Installing the Backup CRD in %s in %s...\n", strings.Join(names, ", "), after)
	select {
	case <-time.After(after):
	case <-ctx.Done():
		return ctx.Err()
	}
	for _, name := range names {
		if err := install(ctx, name, s.configs[mcr.ClusterName(name)], s.seed); err != nil {
			return err
		}
		if err := s.wait(ctx, name+"'s Backup watch started", func() bool { return len(s.parked(name)) == 0 }); err != nil {
			return err
		}
		fmt.Printf("%s serves Backups now: its Backup watch and field index have started.\n", name)
	}
	return nil
}

// report waits until the demo's Backup is reconciled in each cluster of names, and its target
// annotated with it, and prints both.
func (s script) report(ctx context.Context, names []string) error {
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	fmt.Println("Reconciled:")
	for _, name := range names {
		c, err := client.New(s.configs[mcr.ClusterName(name)], client.Options{Scheme: scheme})
		if err != nil {
			return err
		}
		b, cm := &Backup{}, &corev1.ConfigMap{}
		if err := s.wait(ctx, "Backup "+demoBackup+" reconciled in "+name, func() bool {
			return c.Get(ctx, client.ObjectKey{Namespace: demoNamespace, Name: demoBackup}, b) == nil &&
				c.Get(ctx, client.ObjectKey{Namespace: demoNamespace, Name: demoTarget}, cm) == nil &&
				b.Status == BackupStatus{Phase: PhaseScheduled, Cluster: name} && cm.Annotations[BackupsAnnotation] == "1"
		}); err != nil {
			return err
		}
		fmt.Printf("  %s: Backup %s/%s %s; ConfigMap %s/%s %s=%s\n", name, demoNamespace, demoBackup, b.Status.Phase,
			demoNamespace, demoTarget, BackupsAnnotation, cm.Annotations[BackupsAnnotation])
	}
	fmt.Println("Every cluster serves Backups now and nothing is parked; the demo is done.")
	return nil
}

// parked returns what waits in the cluster for it to serve a kind, from the fleet debug state.
func (s script) parked(name string) []string {
	d, err := mcmanager.DebugFleet(s.mgr)
	if err != nil {
		return nil
	}
	for _, c := range d.Clusters {
		if string(c.Name) == name {
			return c.Parked
		}
	}
	return nil
}

// wait polls cond until it holds, for at most stepTimeout; it fails early when the manager stops.
func (s script) wait(ctx context.Context, what string, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-s.stopped:
			return fmt.Errorf("%s: the manager stopped", what)
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}
