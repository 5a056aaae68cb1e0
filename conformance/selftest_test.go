// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance_test

import (
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mcr.dev/conformance"
	"mcr.dev/conformance/internal/reference"
)

// referenceFeatures are the features the reference provider has: every extended feature but
// InPlaceCredentialRefresh, since it engages a new cluster for new credentials.
func referenceFeatures() []conformance.Feature {
	return slices.DeleteFunc(conformance.ExtendedFeatures(), func(f conformance.Feature) bool {
		return f == conformance.InPlaceCredentialRefresh
	})
}

// selfTestOptions claim the reference provider's features and use a short stability window. The reference
// provider gets generous waits; broken providers get tight ones, because their failing tests
// wait for things that never happen and the self-test must stay fast. A correct provider
// engages a member within a second or two even with several runs in parallel.
func selfTestOptions(mode conformance.Mode, broken bool) conformance.Options {
	o := conformance.Options{
		Features:      referenceFeatures(),
		Mode:          mode,
		ManagerConfig: fleet.Member("host").Config(),
		Timeouts: conformance.Timeouts{
			Engage: 30 * time.Second, Disengage: 15 * time.Second, Stable: 2 * time.Second,
			Stop: 15 * time.Second, Settle: 20 * time.Second, Scale: 90 * time.Second,
		},
		ScaleMembers: 24,
		// Many runs at once: their progress would only be noise in the test log.
		Output: io.Discard,
	}
	if broken {
		o.ScaleMembers = 12
		o.Timeouts = conformance.Timeouts{
			Engage: 12 * time.Second, Disengage: 8 * time.Second, Stable: 1500 * time.Millisecond,
			Stop: 8 * time.Second, Settle: 10 * time.Second, Scale: 30 * time.Second,
		}
	}
	return o
}

// TestReferenceProviderPassesEverything runs in parallel with the broken providers, so it leaves
// out the process-wide NoGoroutineLeak, which TestBrokenProvidersLeak runs alone for it.
func TestReferenceProviderPassesEverything(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name        string
		mode        conformance.Mode
		newManager  conformance.NewManagerFunc
		wantManager string
	}{
		{name: "direct", mode: conformance.ModeDirect},
		{name: "manager", mode: conformance.ModeManager, wantManager: "mcr.dev/core/manager"},
		// A provider built on mcr's kit runs under multicluster-runtime's manager as it is.
		{name: "upstream-manager", mode: conformance.ModeManager, newManager: newUpstreamManager, wantManager: "sigs.k8s.io/multicluster-runtime/pkg/manager"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := reference.NewHarness(newFleet(), reference.Faults{})
			o := selfTestOptions(c.mode, false)
			o.NewManager = c.newManager
			o.Skip = []string{conformance.NoGoroutineLeak}
			results, rep, err := conformance.RunTests(t.Context(), h, o, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + rep.Markdown())
			for _, r := range results {
				if r.Result == conformance.NotSupported && r.Feature == conformance.InPlaceCredentialRefresh {
					continue // it engages a new cluster for new credentials
				}
				if r.Result != conformance.Passed && r.ID != conformance.NoGoroutineLeak {
					t.Errorf("%s: %s: %s", r.ID, r.Result, r.Message)
				}
			}
			if rep.Manager != c.wantManager {
				t.Errorf("report.manager = %q, want %q", rep.Manager, c.wantManager)
			}
			data, err := rep.YAML()
			if err != nil {
				t.Fatal(err)
			}
			if err := conformance.Verify(data); err != nil {
				t.Errorf("the report of the reference provider does not verify: %v", err)
			}
		})
	}
}

// brokenProvider is a deliberately broken variant of the reference provider and the tests it
// must fail: exactly these, all of them "failed", and every other test "passed".
type brokenProvider struct {
	name    string
	faults  reference.Faults
	catches string
	fails   []string
	// manager also runs the variant under a real mcr manager, where it must fail the same tests.
	manager bool
	// cause, when set, must appear in the message of every test it fails: the root cause the
	// suite names instead of a symptom.
	cause string
	// mayFail lists tests whose outcome depends on timing: they may pass or fail (with cause).
	mayFail []string
	// claims are features claimed beyond the reference provider's, which it lacks.
	claims []conformance.Feature
}

// brokenProviders pins what each deliberate bug fails. Several tests share a cause on purpose:
// e.g. a provider that never disengages deleted members also fails the tests that delete
// members to do something else.
var brokenProviders = []brokenProvider{
	{name: "DoubleEngage", faults: reference.Faults{DoubleEngage: true},
		catches: "engages a new member twice, with two cluster instances",
		fails:   []string{conformance.EngageOnAdd}},
	{name: "IgnorePreexisting", faults: reference.Faults{IgnorePreexisting: true},
		catches: "ignores members that exist at Start (multicluster-runtime PR #49)",
		fails:   []string{conformance.EngagePreexisting, conformance.IndexFutureClusters, conformance.CacheSyncedAtEngage, conformance.NameStability}},
	{name: "CopyOnGet", faults: reference.Faults{CopyOnGet: true}, manager: true,
		catches: "Get returns a new wrapper instead of the engaged cluster",
		fails: []string{conformance.GetReturnsEngaged, conformance.ScaleEngageDisengage, conformance.RepeatedCredentialRotation,
			conformance.ServedAcrossResyncs}},
	{name: "ReconcileContext", faults: reference.Faults{ReconcileContext: true},
		catches: "engages with a context that ends with the engaging reconcile",
		fails: []string{conformance.EngageContextLifetime, conformance.NoReengageOnUpdate, conformance.SurvivesSourceRestart,
			conformance.NoReengageOnResync, conformance.ServedAcrossResyncs}},
	{name: "ReengageOnUpdate", faults: reference.Faults{ReengageOnUpdate: true},
		catches: "engages a new cluster on every write of the member's entry",
		fails:   []string{conformance.NoReengageOnUpdate}},
	{name: "KeepOnDelete", faults: reference.Faults{KeepOnDelete: true}, manager: true,
		catches: "never disengages deleted members",
		fails: []string{conformance.DisengageOnDelete, conformance.ConcurrentGet, conformance.NoGoroutineLeak,
			conformance.ScaleEngageDisengage, conformance.SurvivesSourceRestart}},
	{name: "StaleGet", faults: reference.Faults{StaleGet: true},
		catches: "keeps serving disengaged clusters from Get (multicluster-runtime PR #143)",
		fails: []string{conformance.DisengageOnDelete, conformance.DisengageWhenUnready, conformance.ReengageWhenReady,
			conformance.ScaleEngageDisengage}},
	{name: "NilBeforeStart", faults: reference.Faults{NilBeforeStart: true},
		catches: "Get returns (nil, nil) before Start",
		fails:   []string{conformance.NotFoundForUnknown}},
	{name: "IndexOnlyExisting", faults: reference.Faults{IndexOnlyExisting: true},
		catches: "IndexField reaches only the clusters engaged at the time",
		fails:   []string{conformance.IndexFutureClusters, conformance.CacheSyncedAtEngage}},
	{name: "IndexOnlyFuture", faults: reference.Faults{IndexOnlyFuture: true},
		catches: "IndexField reaches only clusters engaged later",
		fails:   []string{conformance.IndexExistingClusters, conformance.IndexFutureClusters, conformance.IndexIsolation}},
	{name: "IndexTwice", faults: reference.Faults{IndexTwice: true},
		catches: "applies indexes recorded before Start twice (multicluster-runtime PR #180)",
		fails:   []string{conformance.IndexFutureClusters, conformance.CacheSyncedAtEngage}},
	{name: "FleetWideList", faults: reference.Faults{FleetWideList: true},
		catches: "an indexed List returns the objects of every cluster",
		fails:   []string{conformance.IndexIsolation}},
	{name: "RenameOnRestart", faults: reference.Faults{RenameOnRestart: true},
		catches: "names clusters differently after a restart",
		fails:   []string{conformance.NameStability}},
	{name: "TransientGetError", faults: reference.Faults{TransientGetError: true},
		catches: "Get fails with an error other than ErrClusterNotFound while a member is being engaged",
		fails:   []string{conformance.ConcurrentGet}},
	{name: "ContextsOutliveStop", faults: reference.Faults{ContextsOutliveStop: true},
		catches: "Start returns without ending the engage contexts",
		fails:   []string{conformance.CleanStop}},
	{name: "LeakyDisengage", faults: reference.Faults{LeakyDisengage: true},
		catches: "ends the engage context on delete but never stops the cluster (milo-os PR #638)",
		fails:   []string{conformance.NoGoroutineLeak}},
	{name: "IgnoreReadiness", faults: reference.Faults{IgnoreReadiness: true},
		catches: "keeps unready members engaged",
		fails:   []string{conformance.DisengageWhenUnready, conformance.ReengageWhenReady}},
	{name: "NoReengageWhenReady", faults: reference.Faults{NoReengageWhenReady: true},
		catches: "never engages a member again once it was unready",
		fails:   []string{conformance.ReengageWhenReady}},
	{name: "IgnoreCredentialChange", faults: reference.Faults{IgnoreCredentialChange: true},
		catches: "keeps the old cluster when the kubeconfig changes",
		fails:   []string{conformance.ReengageOnCredentialRotation, conformance.RepeatedCredentialRotation}},
	// A provider that claims InPlaceCredentialRefresh is held to it.
	{name: "ReengageClaimingInPlace", claims: []conformance.Feature{conformance.InPlaceCredentialRefresh},
		catches: "claims InPlaceCredentialRefresh but engages a new cluster when only the credentials change",
		fails:   []string{conformance.ReengageOnCredentialRotation, conformance.RepeatedCredentialRotation}},
	{name: "IgnoreCredentialChangeClaimingInPlace", faults: reference.Faults{IgnoreCredentialChange: true},
		claims:  []conformance.Feature{conformance.InPlaceCredentialRefresh},
		catches: "claims InPlaceCredentialRefresh but keeps using the old, revoked credentials, and the old server address",
		fails:   []string{conformance.ReengageOnCredentialRotation, conformance.RepeatedCredentialRotation, conformance.ReengageOnServerChange}},
	{name: "RotationKeepsOld", faults: reference.Faults{RotationKeepsOld: true},
		catches: "engages the new cluster after a rotation but leaves the old one engaged",
		fails:   []string{conformance.ReengageOnCredentialRotation, conformance.RepeatedCredentialRotation}},
	{name: "NoRetry", faults: reference.Faults{NoRetry: true},
		catches: "gives up on a member after a failed Engage",
		fails:   []string{conformance.RetryAfterEngageError}},
	{name: "NoCancelOnEngageError", faults: reference.Faults{NoCancelOnEngageError: true},
		catches: "retries a failed Engage but leaves the failed context alive",
		fails:   []string{conformance.RetryAfterEngageError}},
	{name: "MaxClusters", faults: reference.Faults{MaxClusters: 8},
		catches: "stops engaging members beyond a fixed number",
		fails:   []string{conformance.ScaleEngageDisengage}},
	{name: "SyncContext", faults: reference.Faults{SyncContext: true},
		catches: "starts and engages clusters with a sync context canceled on return (issue 14)",
		fails:   syncContextFails, cause: "the engage context of", mayFail: syncContextMayFail},
	{name: "StartReturnsEarly", faults: reference.Faults{StartReturnsEarly: true},
		catches: "returns from Start at once",
		fails:   allBut(conformance.NoGoroutineLeak), cause: "Start returned"},
	{name: "NeverEngage", faults: reference.Faults{NeverEngage: true},
		catches: "never engages a member",
		fails:   allBut(conformance.NoGoroutineLeak), cause: "the provider has engaged no member in this run"},
	{name: "SerialAccessCheck", faults: reference.Faults{SerialAccessCheck: true}, manager: true,
		catches: "checks the access to one member at a time, so an unresponsive member holds up the others",
		fails:   []string{conformance.NoDelayBehindUnresponsive}},
	{name: "LogKubeconfig", faults: reference.Faults{LogKubeconfig: true},
		catches: "logs the member's kubeconfig when engaging it fails",
		fails:   []string{conformance.NoCredentialsReported}},
	{name: "ForgetOnSourceLoss", faults: reference.Faults{ForgetOnSourceLoss: true},
		catches: "takes a source of truth it cannot read for an empty one",
		fails:   []string{conformance.SurvivesSourceRestart}},
	{name: "ReengageAfterSourceLoss", faults: reference.Faults{ReengageAfterSourceLoss: true},
		catches: "engages every member again after an outage of the source of truth",
		fails:   []string{conformance.SurvivesSourceRestart}},
	// It re-engages every second (the reference harness's resync period), so every test that
	// keeps a member engaged for longer may catch it too.
	{name: "ReengageOnResync", faults: reference.Faults{ReengageOnResync: true},
		catches: "engages every member again on every periodic resync",
		fails:   []string{conformance.NoReengageOnResync, conformance.ServedAcrossResyncs},
		mayFail: allBut(conformance.NoReengageOnResync, conformance.ServedAcrossResyncs, conformance.NotFoundForUnknown, conformance.CleanStop,
			conformance.NoGoroutineLeak)},
	{name: "EngageBeforeIndexSync", faults: reference.Faults{EngageBeforeIndexSync: true}, manager: true,
		catches: "engages a cluster right after applying its indexes, before the informers they start have synced",
		fails:   []string{conformance.CacheSyncedAtEngage}},
	{name: "GetKeepsFirst", faults: reference.Faults{GetKeepsFirst: true},
		catches: "Get keeps returning the first cluster of a name until the member is disengaged, also after a rotation",
		fails:   []string{conformance.RepeatedCredentialRotation}},
	{name: "RotationBackoff", faults: reference.Faults{RotationBackoff: true},
		catches: "re-engages a member for a credential change at most once an hour: the second rotation in a row waits",
		fails:   []string{conformance.RepeatedCredentialRotation}},
	// It stops a cluster four resyncs (seconds) after engaging it, so every test that keeps
	// using a cluster for longer may catch it too.
	{name: "StopOnResync", faults: reference.Faults{StopOnResync: true},
		catches: "stops a member's cluster on its fourth resync (an idle-client cleanup) but keeps it engaged",
		fails:   []string{conformance.ServedAcrossResyncs},
		mayFail: allBut(conformance.ServedAcrossResyncs, conformance.NotFoundForUnknown, conformance.CleanStop, conformance.NoGoroutineLeak)},
}

// syncContextFails are the tests that SyncContext fails: every test that uses an engaged
// cluster, or keeps an engage context alive.
var syncContextFails = []string{
	conformance.EngageOnAdd, conformance.EngagePreexisting, conformance.GetReturnsEngaged, conformance.EngageContextLifetime,
	conformance.NoReengageOnUpdate, conformance.IndexExistingClusters, conformance.IndexFutureClusters,
	conformance.IndexIsolation, conformance.NameStability, conformance.NoGoroutineLeak,
	conformance.ReengageOnCredentialRotation, conformance.ReengageWhenReady, conformance.RetryAfterEngageError,
	conformance.ScaleEngageDisengage, conformance.NoDelayBehindUnresponsive, conformance.SurvivesSourceRestart,
	conformance.NoReengageOnResync, conformance.RepeatedCredentialRotation, conformance.ServedAcrossResyncs,
}

// syncContextMayFail: ConcurrentGet passes if a Get catches one of SyncContext's clusters in the
// moment between Engage and the end of its context, and fails naming the dead context if none does;
// CacheSyncedAtEngage passes when its waits for an Engage end before the dead contexts are known.
var syncContextMayFail = []string{conformance.ConcurrentGet, conformance.CacheSyncedAtEngage}

// allBut returns the IDs of every test except those given.
func allBut(except ...string) []string {
	var ids []string
	for _, t := range conformance.Tests() {
		if !slices.Contains(except, t.ID) {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

// TestEveryTestCanFail checks that the broken providers cover the suite: every test is failed
// by at least one of them.
func TestEveryTestCanFail(t *testing.T) {
	for _, test := range conformance.Tests() {
		if !slices.ContainsFunc(brokenProviders, func(b brokenProvider) bool { return slices.Contains(b.fails, test.ID) }) {
			t.Errorf("no broken provider fails %s", test.ID)
		}
	}
}

// brokenParallelism is how many broken providers run at once. Their tests mostly wait (for
// things that do not happen, or for stability windows), so more than the CPU count is fine.
const brokenParallelism = 8

// TestBrokenProvidersFailExactlyTheirTests runs the whole suite, except the process-wide
// NoGoroutineLeak, against every broken provider at once and checks the failing tests.
// NoGoroutineLeak runs in TestBrokenProvidersLeak, one provider at a time.
func TestBrokenProvidersFailExactlyTheirTests(t *testing.T) {
	t.Parallel()
	type run struct {
		b       brokenProvider
		mode    conformance.Mode
		results []conformance.TestResult
		err     error
	}
	var runs []*run
	for _, b := range brokenProviders {
		runs = append(runs, &run{b: b, mode: conformance.ModeDirect})
		if b.manager {
			runs = append(runs, &run{b: b, mode: conformance.ModeManager})
		}
	}
	// The runs with the most failing tests (each waits out a timeout) start first, so that
	// they do not all end up last.
	slices.SortStableFunc(runs, func(a, b *run) int { return len(b.b.fails) - len(a.b.fails) })
	sem := make(chan struct{}, brokenParallelism)
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			o := selfTestOptions(r.mode, true)
			o.Features = append(o.Features, r.b.claims...)
			o.Skip = []string{conformance.NoGoroutineLeak}
			h := reference.NewHarness(newFleet(), r.b.faults)
			logf := func(format string, args ...any) {
				if testing.Verbose() {
					t.Logf(r.b.name+"/"+string(r.mode)+": "+format, args...)
				}
			}
			start := time.Now()
			r.results, _, r.err = conformance.RunTests(t.Context(), h, o, logf)
			t.Logf("%s/%s: done in %s", r.b.name, r.mode, time.Since(start).Round(time.Second))
		})
	}
	wg.Wait()
	// Dependents are skipped once a rule they need failed, so some run must still really fail
	// each test (NoGoroutineLeak runs in TestBrokenProvidersLeak).
	for _, test := range conformance.Tests() {
		if test.ID == conformance.NoGoroutineLeak {
			continue
		}
		if !slices.ContainsFunc(runs, func(r *run) bool {
			return slices.ContainsFunc(r.results, func(res conformance.TestResult) bool { return res.ID == test.ID && res.Result == conformance.Failed })
		}) {
			t.Errorf("no broken provider's run failed %s (at most skipped it after a rule it needs failed)", test.ID)
		}
	}
	for _, r := range runs {
		t.Run(r.b.name+"/"+string(r.mode), func(t *testing.T) {
			if r.err != nil {
				t.Fatal(r.err)
			}
			want := slices.DeleteFunc(slices.Clone(r.b.fails), func(id string) bool { return id == conformance.NoGoroutineLeak })
			checkBroken(t, r.b, r.results, want, conformance.NoGoroutineLeak)
		})
	}
}

// TestBrokenProvidersLeak runs NoGoroutineLeak, which counts the goroutines of the whole
// process, alone: against the reference provider and every broken provider expected to fail it.
// It is not parallel, so Go runs it before the parallel tests of this package start.
func TestBrokenProvidersLeak(t *testing.T) {
	cases := []brokenProvider{{name: "Reference"}}
	for _, b := range brokenProviders {
		if slices.Contains(b.fails, conformance.NoGoroutineLeak) {
			cases = append(cases, b)
		}
	}
	for _, b := range cases {
		t.Run(b.name, func(t *testing.T) {
			h := reference.NewHarness(newFleet(), b.faults)
			res, err := conformance.RunTest(t.Context(), h, selfTestOptions(conformance.ModeDirect, b.name != "Reference"), conformance.NoGoroutineLeak, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			want := conformance.Passed
			if slices.Contains(b.fails, conformance.NoGoroutineLeak) {
				want = conformance.Failed
			}
			if res.Result != want {
				t.Errorf("NoGoroutineLeak: %s, want %s: %s", res.Result, want, res.Message)
			}
		})
	}
}

// checkBroken compares the results of a broken provider with the tests it must fail; tests in
// ignore were not run.
func checkBroken(t *testing.T, b brokenProvider, results []conformance.TestResult, want []string, ignore ...string) {
	t.Helper()
	var got, notRun []string
	for _, r := range results {
		if slices.Contains(ignore, r.ID) {
			continue
		}
		switch {
		case r.Result == conformance.Passed:
		case r.Result == conformance.NotSupported && !slices.Contains(b.claims, r.Feature):
			// A feature beyond the reference provider's that this variant does not claim.
			notRun = append(notRun, r.ID)
		case r.Result == conformance.Skipped && strings.HasPrefix(r.Message, "not run: it needs "):
			// A rule it builds on failed first: skipped naming that failure, which counts for
			// a test it must fail, and is no false failure for one it would pass.
			got = append(got, r.ID)
		case r.Result == conformance.Failed:
			got = append(got, r.ID)
			if !slices.Contains(want, r.ID) && !slices.Contains(b.mayFail, r.ID) {
				t.Errorf("%s (%s) failed %s, which it must pass: %s", b.name, b.catches, r.ID, r.Message)
			}
			if b.cause != "" && !strings.Contains(r.Message, b.cause) {
				t.Errorf("%s (%s) failed %s without naming the root cause (%q): %s", b.name, b.catches, r.ID, b.cause, r.Message)
			}
		default:
			t.Errorf("%s (%s): %s is %s, want passed or failed: %s", b.name, b.catches, r.ID, r.Result, r.Message)
		}
	}
	for _, id := range want {
		if !slices.Contains(got, id) && !slices.Contains(notRun, id) {
			t.Errorf("%s (%s) passed %s, which it must fail", b.name, b.catches, id)
		}
	}
}
