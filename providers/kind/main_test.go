// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kind_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kind"
	"mcr.dev/providers/kind/internal/kindtest"
	"mcr.dev/providers/kind/internal/standin"
)

// fleet is shared by the tests of this package: starting apiservers is the slow part. Stand-in
// kind clusters point at its members.
var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	providertest.Main(m, providertest.MainOptions{Members: []string{"east", "west", "north"}}, setup)
}

// setup keeps the fleet and makes every `docker` the kind library runs the stand-in. Each test
// points it at a state directory of its own (useStandIn). Fuzzing processes get no setup: a fuzz
// target brings its own container engine.
func setup(f *envtest.Fleet) error {
	fleet = f
	// One directory per user, reused by every run: envtest.Main has no hook to remove a
	// directory of the run's own when the tests end.
	bin := filepath.Join(os.TempDir(), fmt.Sprintf("mcr-kind-standin-%d", os.Getuid()))
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	// No default state: a test that forgets useStandIn sees no kind installation.
	if err := kindtest.Install(bin, filepath.Join(bin, "no-state")); err != nil {
		return err
	}
	// The container engine is chosen by detection, which finds the stand-in as docker.
	return os.Unsetenv("KIND_EXPERIMENTAL_PROVIDER")
}

// waitTimeout bounds every wait for the provider to catch up with a change.
const waitTimeout = 2 * time.Minute

// useStandIn gives the test an empty kind installation of its own, and checks when the test
// ends that the kind library made no docker call the stand-in does not serve. Tests that call it
// must not run in parallel: the stand-in's state directory is in the process environment.
func useStandIn(t *testing.T) kindtest.Clusters {
	t.Helper()
	state := standin.State{Dir: t.TempDir()}
	t.Setenv(standin.StateDirEnv, state.Dir)
	t.Setenv(standin.TraceEnv, "1") // calls.log tells tests when the provider looked again
	t.Cleanup(func() {
		calls, err := state.Unsupported()
		if err != nil {
			t.Error(err)
		}
		if len(calls) > 0 {
			t.Errorf("the kind library made docker calls the stand-in does not serve:\n%s", strings.Join(calls, "\n"))
		}
	})
	return kindtest.Clusters{State: state}
}

// create makes a stand-in kind cluster served by the member's apiserver with admin credentials.
func create(t *testing.T, kc kindtest.Clusters, name, member string) {
	t.Helper()
	if err := kc.Create(name, fleet.Member(member).Kubeconfig()); err != nil {
		t.Fatalf("creating kind cluster %q: %v", name, err)
	}
}

// calls counts the docker calls so far whose command line contains every part.
func calls(t *testing.T, kc kindtest.Clusters, parts ...string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(kc.State.Dir, "calls.log"))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		if containsAll(l, parts) {
			n++
		}
	}
	return n
}

// kubeconfigRead is the docker call with which kind reads the kubeconfig of a cluster.
func kubeconfigRead(name string) []string {
	return []string{"exec --privileged " + name + "-control-plane cat " + standin.AdminConfPath}
}

// listCall is the docker call with which kind lists the clusters.
var listCall = []string{`ps -a --filter label=io.x-k8s.kind.cluster --format {{.Label "io.x-k8s.kind.cluster"}}`}

// waitCalls waits until n more docker calls that contain every part have been made: proof that
// the provider looked again, without guessing how long that takes.
func waitCalls(t *testing.T, kc kindtest.Clusters, n int, parts ...string) {
	t.Helper()
	target := calls(t, kc, parts...) + n
	eventually(t, fmt.Sprintf("%d more docker calls %q", n, parts), func() error {
		if got := calls(t, kc, parts...); got < target {
			return fmt.Errorf("%d of %d", got, target)
		}
		return nil
	})
}

// engagement is one Engage call seen by the recorder.
type engagement = providertest.Engagement

// started is a running provider.
type started struct {
	*providertest.Session
	provider *kind.Provider
	rec      *providertest.Recorder
	stop     func()
}

// start runs a provider for opts until the test ends (or stop is called), with short intervals.
func start(t *testing.T, opts kind.Options) *started {
	t.Helper()
	if opts.PollInterval == 0 {
		opts.PollInterval = 300 * time.Millisecond
	}
	if opts.CacheSyncTimeout == 0 {
		opts.CacheSyncTimeout = 20 * time.Second
	}
	// Members that fail are retried within seconds, not minutes, as in the other providers'
	// tests: a test waits for their next sync.
	if opts.RetryMaxDelay == 0 {
		opts.RetryMinDelay, opts.RetryMaxDelay = 200*time.Millisecond, 2*time.Second
	}
	p := kind.New(opts)
	s := providertest.StartSession(t, p, nil, waitTimeout)
	return &started{Session: s, provider: p, rec: s.Recorder, stop: s.Stop}
}

// eventually polls cond until it returns nil, failing the test with its last error after
// waitTimeout.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	providertest.Eventually(t, waitTimeout, what, cond)
}

// waitEngaged waits until exactly names are engaged, and visible to Get.
func (s *started) waitEngaged(t *testing.T, names ...multicluster.ClusterName) {
	t.Helper()
	slices.Sort(names)
	eventually(t, fmt.Sprintf("engaged clusters %v", names), func() error {
		if got := s.rec.Engaged(); !slices.Equal(got, names) {
			return fmt.Errorf("engaged: %v", got)
		}
		for _, name := range names {
			if _, err := s.provider.Get(context.Background(), name); err != nil {
				return err
			}
		}
		return nil
	})
}

// current returns the live engagement of name, failing the test if there is none.
func (s *started) current(t *testing.T, name multicluster.ClusterName) *engagement {
	t.Helper()
	e, _ := s.rec.Latest(name)
	if e == nil || e.Ctx.Err() != nil {
		t.Fatalf("cluster %q is not engaged", name)
	}
	return e
}

// requireReaches fails unless the engaged cluster of name talks to member: it lists ConfigMaps
// through the cluster's own client, uncached, against the real apiserver.
func (s *started) requireReaches(t *testing.T, name multicluster.ClusterName, member string) {
	t.Helper()
	s.RequireReaches(t, name, fleet.Member(member).Host())
}

// logBuffer collects log lines for assertions.
type logBuffer = providertest.LogBuffer

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
