// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package exampletest holds what the smoke tests of the examples share: one fleet of real
// kube-apiservers per test binary (mcr.dev/core/envtest), an example program running in the
// background, and waits that fail with the reason. It is imported by tests only.
package exampletest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/envtest"
)

// WaitTimeout bounds every wait of a smoke test: generous, the tests run on a busy 2-core
// machine with the race detector.
const WaitTimeout = 2 * time.Minute

// The label and annotation of the marker controller every provider example carries in its
// controller.go (the canonical copy is examples/providers/kubeconfig/controller.go).
const (
	// MarkLabel, with the value "true", selects the ConfigMaps the marker reconciles.
	MarkLabel = "mcr.dev/example"
	// MarkAnnotation is set to the name of the cluster the ConfigMap was reconciled in.
	MarkAnnotation = "mcr.dev/reconciled-in"
)

// Main starts a fleet with the given members, stores it in *fleet, runs the tests and stops the
// fleet. Call it from TestMain: os.Exit(exampletest.Main(m, &fleet, "east", "west")).
func Main(m *testing.M, fleet **envtest.Fleet, members ...string) int {
	// Examples set up their own logging from flags; tests keep the output quiet unless -v.
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	f, err := envtest.Start(ctx, envtest.Options{Members: members})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the fleet:", err)
		return 1
	}
	*fleet = f
	code := m.Run()
	if err := f.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the fleet:", err)
	}
	return code
}

// WriteKubeconfig writes the member's admin kubeconfig into dir as <file> and returns the path.
func WriteKubeconfig(t testing.TB, dir, file string, m *envtest.Member) string {
	t.Helper()
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, m.Kubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Client returns an admin client for cfg, failing the test if there is none.
func Client(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// SeedMarked creates the namespace and a ConfigMap in it that the marker controller reconciles.
func SeedMarked(t testing.TB, c client.Client, namespace, name string) {
	t.Helper()
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name, Labels: map[string]string{MarkLabel: "true"},
		}},
	}
	for _, obj := range objs {
		if err := c.Create(t.Context(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// InstallCRD creates crd with c unless it exists, and waits up to WaitTimeout until it is
// established (envtest.InstallCRDs).
func InstallCRD(t testing.TB, c client.Client, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), WaitTimeout)
	defer cancel()
	if err := envtest.InstallCRDs(ctx, c, crd); err != nil {
		t.Fatal(err)
	}
}

// MarkedBy returns a condition for Eventually: the ConfigMap carries the marker annotation with
// the value cluster.
func MarkedBy(c client.Client, namespace, name, cluster string) func(context.Context) error {
	return func(ctx context.Context) error {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm); err != nil {
			return err
		}
		if got := cm.Annotations[MarkAnnotation]; got != cluster {
			return fmt.Errorf("ConfigMap %s/%s is marked %q, want %q", namespace, name, got, cluster)
		}
		return nil
	}
}

// Program is an example program running in the background.
type Program struct {
	cancel func()
	done   chan error
	output func() string
}

// Output returns what a program started with StartChild wrote to stdout and stderr; call it
// after the program ended.
func (p *Program) Output() string {
	if p.output == nil {
		return ""
	}
	return p.output()
}

// Start runs fn in the background with a context that ends when Stop is called or the test
// ends. The test fails if fn returns an error.
func Start(t testing.TB, fn func(ctx context.Context) error) *Program {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &Program{cancel: cancel, done: make(chan error, 1)}
	go func() { p.done <- fn(ctx) }()
	t.Cleanup(func() { p.Stop(t) })
	return p
}

// childArgsEnv carries the arguments of an example program run in a child process.
const childArgsEnv = "MCR_EXAMPLE_CHILD_ARGS"

// RunChild runs the example program in this process when it is a child started by StartChild,
// and then exits; otherwise it returns at once. Call it first thing in TestMain.
//
// A child process is for running a program a second time in one test binary: controller-runtime
// refuses a second controller of the same name in one process.
func RunChild(run func(ctx context.Context, args []string) error) {
	encoded, ok := os.LookupEnv(childArgsEnv)
	if !ok {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(encoded), &args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := run(ctx, args)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// StartChild runs the example program with args in a child process: the test binary itself,
// whose TestMain calls RunChild. Stop sends it SIGTERM, as a kubelet would.
func StartChild(t testing.TB, args ...string) *Program {
	t.Helper()
	encoded, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	var output bytes.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+string(encoded))
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Program{
		cancel: func() { _ = cmd.Process.Signal(syscall.SIGTERM) },
		done:   make(chan error, 1),
		output: output.String,
	}
	go func() {
		err := cmd.Wait()
		if err != nil {
			err = fmt.Errorf("%w; output:\n%s", err, output.String())
		}
		p.done <- err
	}()
	t.Cleanup(func() { p.Stop(t) })
	return p
}

// Stop ends the program and fails the test unless it returns nil within WaitTimeout.
// Calling it again does nothing.
func (p *Program) Stop(t testing.TB) {
	t.Helper()
	if p.done == nil {
		return
	}
	p.cancel()
	select {
	case err := <-p.done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("the example returned: %v", err)
		}
	case <-time.After(WaitTimeout):
		t.Errorf("the example did not return within %s of its context ending", WaitTimeout)
	}
	p.done = nil
}

// Wait waits for the program to end on its own, for at most timeout, and returns its error.
func (p *Program) Wait(t testing.TB, timeout time.Duration) error {
	t.Helper()
	if p.done == nil {
		t.Fatal("the example has ended already")
	}
	select {
	case err := <-p.done:
		p.done = nil
		return err
	case <-time.After(timeout):
		t.Fatalf("the example did not end within %s", timeout)
		return nil
	}
}

// Eventually polls cond until it returns nil. It fails the test with cond's last error after
// WaitTimeout, or at once if the program ended.
func (p *Program) Eventually(t testing.TB, what string, cond func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), WaitTimeout)
	defer cancel()
	var err error
	for {
		if err = cond(ctx); err == nil {
			return
		}
		select {
		case runErr := <-p.done:
			p.done = nil
			t.Fatalf("%s: the example ended early (%v); last state: %v", what, runErr, err)
		case <-ctx.Done():
			t.Fatalf("%s: not reached within %s: %v", what, WaitTimeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
