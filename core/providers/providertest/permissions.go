// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
)

// PermissionCase is one run of a permission test: the provider's RBAC manifest whole, or less
// one permission.
type PermissionCase struct {
	// Index is 0 for the whole manifest and counts the permissions taken away from 1: unique
	// within the test, for names of namespaces and identities.
	Index int
	// Removed names the permission taken away (see RuleRemoval); empty for the whole manifest.
	Removed string
	// Rules are the rules to run the provider with.
	Rules []rbacv1.PolicyRule
}

// Whole reports whether c runs with the whole manifest, where nothing may fail.
func (c PermissionCase) Whole() bool { return c.Removed == "" }

// PermissionTest shows that a provider's RBAC manifest is enough and that each of its
// permissions is needed (see RunPermissionTests).
type PermissionTest struct {
	// Rules are the manifest's rules (see ManifestRules).
	Rules []rbacv1.PolicyRule
	// Variants are the ways each case runs, in parallel: hosts (one with streaming lists, one
	// without), modes of the provider. Empty: one run, named "run".
	Variants []string
	// Scenario runs the provider with c.Rules in variant, as an identity of its own, and returns
	// what failed ("the member was not engaged", "Start failed: ...", a Forbidden error logged
	// for the identity). With the whole manifest nothing may fail; without a permission something
	// must. A Trial collects the failures of a provider that may not start.
	Scenario func(t *testing.T, c PermissionCase, variant string) []string
}

// RunPermissionTests runs pt.Scenario for the whole manifest and for the manifest less each of
// its permissions (EachPermissionRemoved), every case and variant in parallel, as subtests named
// "without <permission>" ("without none" for the whole manifest) with one subtest per variant.
// It fails a case whose whole manifest fails at something, and one without a permission where
// nothing fails: that permission can leave the manifest.
func RunPermissionTests(t *testing.T, pt PermissionTest) {
	t.Helper()
	if len(pt.Rules) == 0 {
		t.Fatal("permission test: the manifest has no rules")
	}
	variants := pt.Variants
	if len(variants) == 0 {
		variants = []string{"run"}
	}
	cases := []PermissionCase{{Rules: pt.Rules}}
	for i, r := range EachPermissionRemoved(pt.Rules) {
		cases = append(cases, PermissionCase{Index: i + 1, Removed: r.Removed, Rules: r.Rules})
	}
	for _, c := range cases {
		name := c.Removed
		if c.Whole() {
			name = "none"
		}
		t.Run("without "+name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var failures []string
			// The variants run as parallel subtests; Cleanup judges them once all are done.
			t.Cleanup(func() {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case c.Whole() && len(failures) > 0:
					t.Errorf("with the whole manifest: %s", strings.Join(failures, "; "))
				case !c.Whole() && len(failures) == 0:
					t.Errorf("nothing failed without %s: the manifest need not grant it", c.Removed)
				case !c.Whole():
					t.Logf("without %s: %s", c.Removed, strings.Join(failures, "; "))
				}
			})
			for _, variant := range variants {
				t.Run(variant, func(t *testing.T) {
					t.Parallel()
					got := pt.Scenario(t, c, variant)
					mu.Lock()
					defer mu.Unlock()
					for _, f := range got {
						failures = append(failures, variant+": "+f)
					}
				})
			}
		})
	}
}

// trialPoll is how often a Trial looks again; its conditions list from API servers.
const trialPoll = 100 * time.Millisecond

// Trial runs a provider that may fail, as it does without a permission it needs, and collects
// what it fails at instead of failing the test. Start returning early is a failure of its own and
// ends every later wait at once.
type Trial struct {
	// Recorder is the Aware the provider engages clusters with.
	Recorder *Recorder

	window   time.Duration
	done     chan error
	mu       sync.Mutex
	startErr error
	ended    bool
	failures []string
}

// StartTrial runs p.Start with a new Recorder until the test ends. Each Within waits at most
// window. When the test ends, Start must return within shutdown of its context ending; what it
// returns then is logged, not failed (a cache that cannot sync may end it so).
func StartTrial(t testing.TB, p multicluster.ProviderRunnable, window, shutdown time.Duration) *Trial {
	t.Helper()
	tr := &Trial{Recorder: NewRecorder(), window: window, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { tr.done <- p.Start(ctx, tr.Recorder) }()
	t.Cleanup(func() {
		cancel()
		if tr.Ended() {
			return
		}
		select {
		case err := <-tr.done:
			if err != nil {
				t.Logf("provider Start returned: %v", err)
			}
		case <-time.After(shutdown):
			t.Errorf("provider Start did not return within %s of its context ending", shutdown)
		}
	})
	return tr
}

// Ended reports whether Start has returned before the test ended.
func (tr *Trial) Ended() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if !tr.ended {
		select {
		case tr.startErr = <-tr.done:
			tr.ended = true
		default:
		}
	}
	return tr.ended
}

// Within waits until cond holds, at most the trial's window, and reports whether it did; when it
// did not, or Start returned meanwhile, what is recorded as a failure.
func (tr *Trial) Within(what string, cond func() bool) bool {
	deadline := time.Now().Add(tr.window)
	for !cond() {
		if tr.Ended() || time.Now().After(deadline) {
			tr.Fail(what)
			return false
		}
		time.Sleep(trialPoll)
	}
	return true
}

// Fail records a failure.
func (tr *Trial) Fail(what string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.failures = append(tr.failures, what)
}

// FailForbidden records a failure when a line of logs reports a Forbidden error for user (the
// provider's identity, "system:serviceaccount:<namespace>:<name>"): an error that changes
// nothing the trial's waits see, such as a watch refused after the initial list, still shows a
// missing permission.
func (tr *Trial) FailForbidden(user string, logs ...*LogBuffer) {
	for _, b := range logs {
		if lines := b.All(user, "forbidden"); len(lines) > 0 {
			tr.Fail("Forbidden: " + lines[0])
			return
		}
	}
}

// WatchForbidden is FailForbidden, looking again until watch has passed: a watch the host
// refuses does not stop a provider (its cache lists again, with backoff), so its Forbidden
// error may be logged after every step of the trial succeeded.
func (tr *Trial) WatchForbidden(user string, watch time.Duration, logs ...*LogBuffer) {
	for deadline := time.Now().Add(watch); ; time.Sleep(trialPoll) {
		for _, b := range logs {
			if lines := b.All(user, "forbidden"); len(lines) > 0 {
				tr.Fail("Forbidden: " + lines[0])
				return
			}
		}
		if time.Now().After(deadline) {
			return
		}
	}
}

// FlappingMemberSteps checks, in trial, that the kit records the same Warning again for an
// unchanged object as a series of its Event (a patch, which needs a permission of its own): a
// member behind flap whose credentials its apiserver refuses is reported Unauthorized, then
// ClusterUnreachable while flap is down, then Unauthorized again once flap is up. events
// returns how often an Event of reason was recorded on the member's object (see EventCount).
// It stops at the first step that fails and reports whether all succeeded.
func FlappingMemberSteps(trial *Trial, flap *envtest.Forwarder, events func(reason string) int32) bool {
	if !trial.Within("Event Unauthorized recorded", func() bool { return events("Unauthorized") >= 1 }) {
		return false
	}
	flap.Down()
	if !trial.Within("Event ClusterUnreachable recorded", func() bool { return events("ClusterUnreachable") >= 1 }) {
		return false
	}
	if err := flap.Up(); err != nil {
		trial.Fail(fmt.Sprintf("bringing the member back: %v", err))
		return false
	}
	return trial.Within("the second Unauthorized Event counted in a series", func() bool { return events("Unauthorized") >= 2 })
}

// Failures returns the failures recorded, and Start's error if it returned early.
func (tr *Trial) Failures() []string {
	ended := tr.Ended()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := append([]string(nil), tr.failures...)
	if ended {
		out = append(out, fmt.Sprintf("Start failed: %v", tr.startErr))
	}
	return out
}

// ServiceAccountConfig returns a config for a ServiceAccount of member with opts' rules (see
// envtest.Member.ServiceAccountKubeconfig): the identity a provider's RBAC test runs it as.
func ServiceAccountConfig(t testing.TB, member *envtest.Member, opts envtest.ServiceAccountOptions) *rest.Config {
	t.Helper()
	data, err := member.ServiceAccountKubeconfig(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// EventTarget names the object Events are about; an empty Kind or Namespace matches any.
type EventTarget struct {
	Kind, Namespace, Name string
}

func (o EventTarget) matches(ref eventsv1.Event) bool {
	r := ref.Regarding
	return r.Name == o.Name && (o.Kind == "" || r.Kind == o.Kind) && (o.Namespace == "" || r.Namespace == o.Namespace)
}

// EventCount returns how often an Event of reason was recorded about target, read with c from
// the namespace ns: 0 without one, its series count if it has a series (a repeated Event is
// patched, not created again), 1 otherwise. A list that fails counts as no Event.
func EventCount(ctx context.Context, c client.Reader, ns string, target EventTarget, reason string) int32 {
	var list eventsv1.EventList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return 0
	}
	var n int32
	for _, e := range list.Items {
		if !target.matches(e) || e.Reason != reason {
			continue
		}
		count := int32(1)
		if e.Series != nil {
			count = e.Series.Count
		}
		n = max(n, count)
	}
	return n
}

// FailingMember returns a kubeconfig for an HTTPS server that answers every request with the
// HTTP status in status: a member that is unreachable in a way the test can change (another
// status gives the provider another error of one reason, which the Event recorder makes a
// series).
func FailingMember(t testing.TB, status *atomic.Int32) []byte {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(int(status.Load()))
	}))
	t.Cleanup(srv.Close)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["flaky"] = &clientcmdapi.Cluster{
		Server:                   srv.URL,
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
	}
	cfg.AuthInfos["flaky"] = &clientcmdapi.AuthInfo{Token: "flaky-member-token"}
	cfg.Contexts["flaky"] = &clientcmdapi.Context{Cluster: "flaky", AuthInfo: "flaky"}
	cfg.CurrentContext = "flaky"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// MemberSteps are the members a permission scenario adds for MemberPermissionSteps.
type MemberSteps struct {
	// Before is a working member the source held when the provider started, After one added
	// once it runs.
	Before, After multicluster.ClusterName
	// Flaky is a member served by FailingMember with Status, first an internal server error.
	Flaky  multicluster.ClusterName
	Status *atomic.Int32
	// Events returns how often an Event of reason was recorded on member's object (see
	// EventCount).
	Events func(member multicluster.ClusterName, reason string) int32
}

// MemberPermissionSteps checks, in trial, what every provider on the kit does with a member
// source: Before and After engaged, a ClusterEngaged Event recorded on After, a
// ClusterUnreachable Event on Flaky and, once Flaky fails otherwise, that Event made a series (a
// patch of the Event, which needs its own permission).
func MemberPermissionSteps(trial *Trial, m MemberSteps) {
	engaged := func(name multicluster.ClusterName) func() bool {
		return func() bool { e, _ := trial.Recorder.Latest(name); return e.Alive() }
	}
	trial.Within("member present at start engaged", engaged(m.Before))
	trial.Within("member created later engaged", engaged(m.After))
	trial.Within("ClusterEngaged Event recorded", func() bool { return m.Events(m.After, "ClusterEngaged") >= 1 })
	if trial.Within("first ClusterUnreachable Event recorded", func() bool { return m.Events(m.Flaky, "ClusterUnreachable") >= 1 }) {
		m.Status.Store(http.StatusBadGateway)
		trial.Within("Event series updated", func() bool { return m.Events(m.Flaky, "ClusterUnreachable") >= 2 })
	}
}
