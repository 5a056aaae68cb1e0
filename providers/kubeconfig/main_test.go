// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kubeconfig"
)

// The fleet is shared by every test of the package: "hub" holds the kubeconfig Secrets, the
// others are members. Tests isolate themselves with a namespace of their own on the hub.
var (
	fleet *envtest.Fleet
	hub   kubernetes.Interface
	// logs receives every log line of the test binary: providers, controller-runtime, client-go.
	logs = &logCapture{}
)

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logs.logger())
	klog.SetLogger(logs.logger())
	envtest.Main(m, envtest.Options{Members: []string{"hub", "m1", "m2", "m3"}}, func(f *envtest.Fleet) error {
		fleet = f
		var err error
		hub, err = kubernetes.NewForConfig(f.Member("hub").Config())
		return err
	})
}

// logCapture keeps every log line, to assert what was and what was never logged, and to scan
// them for leaked credentials (LeakCheck.ScanLogs(&logs.LogBuffer)).
type logCapture struct {
	providertest.LogBuffer
}

func (l *logCapture) logger() logr.Logger { return l.Logger() }

func (l *logCapture) snapshot() []string { return l.Lines() }

// count returns the number of log lines that contain every one of parts.
func (l *logCapture) count(parts ...string) int {
	n := 0
	for _, line := range l.snapshot() {
		if containsAll(line, parts...) {
			n++
		}
	}
	return n
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// assertNeverLogged fails if any log line so far contains one of the secrets.
func assertNeverLogged(t *testing.T, secrets ...string) {
	t.Helper()
	for _, line := range logs.snapshot() {
		for _, s := range secrets {
			if s != "" && strings.Contains(line, s) {
				t.Errorf("a credential was logged: %s", line)
			}
		}
	}
}

// eventually polls check until it returns nil, failing the test with its last error after
// timeout.
func eventually(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %s: %v", what, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const waitTimeout = 90 * time.Second

// engagement is one Engage call seen by recordingAware.
type engagement = providertest.Engagement

// recordingAware is an Aware that remembers every engagement.
type recordingAware struct {
	*providertest.Recorder
}

func newRecordingAware() *recordingAware {
	return &recordingAware{providertest.NewRecorder()}
}

// count returns how many times name was engaged.
func (a *recordingAware) count(name multicluster.ClusterName) int { return a.Count(name) }

// current returns the last engagement of name if its context is still alive.
func (a *recordingAware) current(name multicluster.ClusterName) (*engagement, bool) {
	e, _ := a.Latest(name)
	return e, e.Alive()
}

// waitEngaged waits until name is engaged for the n-th time (n counts from 1) and returns it.
func (a *recordingAware) waitEngaged(t *testing.T, name multicluster.ClusterName, n int) *engagement {
	t.Helper()
	var e *engagement
	eventually(t, waitTimeout, fmt.Sprintf("cluster %q engaged %d time(s)", name, n), func() error {
		if c := a.count(name); c < n {
			return fmt.Errorf("engaged %d time(s)", c)
		}
		var ok bool
		if e, ok = a.current(name); !ok {
			return errors.New("its last engagement has ended")
		}
		return nil
	})
	if c := a.count(name); c != n {
		t.Fatalf("cluster %q engaged %d times, want %d", name, c, n)
	}
	return e
}

var namespaces atomic.Int32

// newNamespace creates a namespace on the hub for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := fmt.Sprintf("t%d-%s", namespaces.Add(1), strings.ToLower(strings.NewReplacer("/", "-", "_", "-", ".", "-").Replace(t.Name())))
	if len(ns) > 63 {
		ns = strings.TrimRight(ns[:63], "-")
	}
	_, err := hub.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", ns, err)
	}
	return ns
}

// startProvider starts p with aware until the test ends.
func startProvider(t *testing.T, p *kubeconfig.Provider, aware multicluster.Aware) {
	t.Helper()
	providertest.RunInBackground(t, "provider Start", time.Minute, func(ctx context.Context) error { return p.Start(ctx, aware) })
}

// testOptions are fast-failing provider options for namespace ns.
func testOptions(ns string) kubeconfig.Options {
	return kubeconfig.Options{
		Namespaces: []string{ns},
		Options: kit.Options{
			CacheSyncTimeout: 20 * time.Second,
			RetryMinDelay:    200 * time.Millisecond,
			RetryMaxDelay:    2 * time.Second,
			Logger:           logs.logger().WithName("provider"),
		},
	}
}

func newProvider(t *testing.T, opts kubeconfig.Options) *kubeconfig.Provider {
	t.Helper()
	p, err := newProviderFor(fleet.Member("hub").Config(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func newProviderFor(host *rest.Config, opts kubeconfig.Options) (*kubeconfig.Provider, error) {
	return kubeconfig.New(host, opts)
}

// putSecret creates or replaces a kubeconfig Secret labeled for the default label.
func putSecret(t *testing.T, ns, name string, kubeconfigData []byte) *corev1.Secret {
	t.Helper()
	return putSecretWith(t, ns, name, map[string]string{kubeconfig.DefaultSecretLabel: "true"}, map[string][]byte{kubeconfig.DefaultSecretKey: kubeconfigData})
}

func putSecretWith(t *testing.T, ns, name string, labels map[string]string, data map[string][]byte) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, Data: data}
	secrets := hub.CoreV1().Secrets(ns)
	existing, err := secrets.Get(t.Context(), name, metav1.GetOptions{})
	if err == nil {
		existing.Labels, existing.Data = labels, data
		out, err := secrets.Update(t.Context(), existing, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("updating Secret %s/%s: %v", ns, name, err)
		}
		return out
	}
	out, err := secrets.Create(t.Context(), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Secret %s/%s: %v", ns, name, err)
	}
	return out
}

// waitEvent waits for an Event with reason on the named Secret and returns its note.
func waitEvent(t *testing.T, ns, secret, reason string) string {
	t.Helper()
	var note string
	eventually(t, waitTimeout, fmt.Sprintf("Event %s on Secret %s/%s", reason, ns, secret), func() error {
		list, err := hub.EventsV1().Events(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "Secret" && e.Regarding.Name == secret && e.Reason == reason {
				note = e.Note
				return nil
			}
			seen = append(seen, e.Regarding.Name+":"+e.Reason)
		}
		return fmt.Errorf("events seen: %v", seen)
	})
	return note
}

// editKubeconfig returns kubeconfig data edited by edit.
func editKubeconfig(t *testing.T, data []byte, edit func(cfg *clientcmdapi.Config)) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	edit(cfg)
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var updateOptions = metav1.UpdateOptions{}
