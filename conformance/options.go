// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
)

// Feature names a group of tests. Core tests need only Core, which every provider has; the
// tests of any other feature run only when the provider claims it in Options.Features and are
// reported "notSupported" otherwise.
type Feature string

const (
	// Core is what every provider must do; it cannot be left out.
	Core Feature = "Core"

	// CredentialRotation is re-engaging a member with a new cluster that uses its new credentials
	// when they change. Needs a Harness that is a CredentialRotator.
	CredentialRotation Feature = "CredentialRotation"

	// InPlaceCredentialRefresh is keeping a member's engagement when only its credentials change:
	// the engaged cluster switches to the new credentials, its cache and watches stay, and it
	// keeps working once the old credentials are revoked. It refines CredentialRotation, which
	// must be claimed with it: the rotation tests then require the engagement to stay instead
	// of a new one.
	InPlaceCredentialRefresh Feature = "InPlaceCredentialRefresh"

	// MemberReadiness is disengaging a member that becomes unready and engaging it again once it
	// is ready. Needs a Harness that is a ReadinessToggler.
	MemberReadiness Feature = "MemberReadiness"

	// EngageErrorRecovery is retrying a failed Engage until it succeeds.
	EngageErrorRecovery Feature = "EngageErrorRecovery"

	// Scale is engaging and disengaging dozens of members added and removed at once.
	Scale Feature = "Scale"

	// UnresponsiveMembers is engaging members independently of one whose apiserver never
	// answers. Needs a Harness that is an
	// UnresponsiveMemberCreator (KubeconfigHarness is).
	UnresponsiveMembers Feature = "UnresponsiveMembers"

	// CredentialHygiene is never reporting a member's credentials (a token, a client key, a
	// password or token in the server URL) in log output or Events. Needs a Harness that is an
	// UnresponsiveMemberCreator and a ReportSource.
	CredentialHygiene Feature = "CredentialHygiene"

	// SourceRestart is keeping unchanged members engaged through an outage of the source of
	// truth and following its changes after it. Needs a Harness that is a SourceRestarter.
	SourceRestart Feature = "SourceRestart"

	// PeriodicResync is re-reading the source of truth periodically without re-engaging
	// unchanged members. Needs a Harness that is a Resyncer.
	PeriodicResync Feature = "PeriodicResync"
)

// ExtendedFeatures returns the features a provider may claim, in a stable order.
func ExtendedFeatures() []Feature {
	return []Feature{CredentialRotation, InPlaceCredentialRefresh, MemberReadiness, EngageErrorRecovery, Scale, UnresponsiveMembers, CredentialHygiene, SourceRestart, PeriodicResync}
}

// Mode is how the suite runs the provider.
type Mode string

const (
	// ModeDirect starts the provider the way a manager does, Start(ctx, aware), with the
	// suite's probe as the Aware, and calls Get and IndexField on the provider itself.
	ModeDirect Mode = "direct"

	// ModeManager runs the provider under a real mcr.dev/core manager: the probe is a runnable
	// added with Manager.Add, Get is Manager.GetCluster and IndexField goes through
	// Manager.GetFieldIndexer. Needs Options.ManagerConfig.
	ModeManager Mode = "manager"
)

// ReportEnv names the environment variable that, when Options.ReportPath is empty, names the
// file the YAML report is written to. Set it when invoking go test; the suite registers no flags.
const ReportEnv = "MCR_CONFORMANCE_REPORT"

// Options configure a conformance run. The zero value runs every core test in ModeDirect with
// the default timeouts and writes no report file.
type Options struct {
	// Features lists the extended features the provider claims. Tests of other features are
	// reported "notSupported". Core is always included.
	//
	// Default: none.
	Features []Feature

	// Skip lists test IDs not to run; they are reported "skipped". A provider that skips a
	// core test is not conformant, the report says "partial".
	//
	// Default: none.
	Skip []string

	// Only, when not empty, runs just these test IDs; all others are reported "skipped". For
	// debugging a single test; a report of such a run is not a conformance claim.
	//
	// Default: all tests.
	Only []string

	// Mode is how the provider is run. Default: ModeDirect.
	Mode Mode

	// NewManager builds the manager of ModeManager around the provider and adds the suite's
	// runnable to it, so that the suite can check a provider under a manager other than mcr's,
	// such as sigs.k8s.io/multicluster-runtime's (see Manager).
	//
	// Default: nil, which builds an mcr.dev/core manager (NewMCRManager).
	NewManager NewManagerFunc

	// ManagerConfig is the rest.Config of the local cluster of the manager in ModeManager (any
	// reachable cluster will do; the manager only runs its own cache there).
	//
	// Default: nil, which makes every test "errored" in ModeManager.
	ManagerConfig *rest.Config

	// Implementation describes the provider under test, for the report.
	//
	// Default: empty.
	Implementation Implementation

	// ReportPath is the file the YAML report is written to at the end of the run.
	//
	// Default: the value of the MCR_CONFORMANCE_REPORT environment variable; no file if that is
	// empty too. The markdown summary is always written to the test log.
	ReportPath string

	// RunDependents runs every test even after a core rule it builds on failed (see the
	// "needs" of each test in docs/conformance.md). By default such a test is skipped, naming
	// that failure, so that a broken provider's run ends quickly instead of each dependent test
	// waiting out its timeouts for a symptom of the same bug.
	RunDependents bool

	// Output receives the run's progress as people read it: one line per test as it ends (ID,
	// result, seconds, the first line of a failure), then the summary table and where the
	// report was written. Under go test it shows without -v when the test binary's output is
	// streamed (go test without package arguments, in the provider's directory).
	//
	// Default: os.Stdout; io.Discard silences it.
	Output io.Writer

	// Timeouts bound every wait of the suite. Default: see Timeouts.
	Timeouts Timeouts

	// ScaleMembers is how many members the Scale test adds and removes at once.
	//
	// Default: 30.
	ScaleMembers int

	// LeakCycles is how many add/delete cycles NoGoroutineLeak runs after a warm-up cycle.
	//
	// Default: 3.
	LeakCycles int

	// LeakTolerance is how many more goroutines than before the cycles NoGoroutineLeak
	// accepts once things have settled. One leaked cluster typically leaves 10 or more
	// (reflectors, informers, watch connections).
	//
	// Default: 8.
	LeakTolerance int
}

// Implementation describes the provider under test in the report.
type Implementation struct {
	// Organization maintaining the provider, e.g. "acme".
	Organization string `json:"organization,omitempty"`
	// Project name, e.g. "acme-provider".
	Project string `json:"project,omitempty"`
	// URL of the project.
	URL string `json:"url,omitempty"`
	// Version of the provider under test: a tag or commit.
	Version string `json:"version,omitempty"`
	// Module is the module of the binary that ran the suite (the provider's, for its test) and
	// its version from the binary's build information: "(devel)" for a checkout, with its git
	// commit when known. The suite fills it in; leave it empty.
	Module string `json:"module,omitempty"`
	// Contact lists people or teams to ask about the report.
	Contact []string `json:"contact,omitempty"`
}

// Timeouts bound the waits of the suite. Every wait of every test uses one of them; a zero
// field selects its default. The defaults are generous on purpose: they must hold on a loaded
// 2-core machine running the race detector. No test asserts that anything is fast.
type Timeouts struct {
	// Engage bounds the wait for a member to be engaged after it was created, made ready or
	// given new credentials, and for an engaged cluster to show an object written to the
	// member. Default: 2 minutes.
	Engage time.Duration

	// Disengage bounds the wait for an engage context to end and for Get to report
	// ErrClusterNotFound after a member was deleted or made unready. Default: 1 minute.
	Disengage time.Duration

	// Stable is how long a state must hold to count as stable: no re-engage after an update, an
	// engage context that stays alive, no re-engage after a delete. It is a window that
	// observations must hold for, not a bound on anything. Default: 5 seconds.
	Stable time.Duration

	// Stop bounds the wait for the provider's Start to return after its context ended.
	// Default: 1 minute.
	Stop time.Duration

	// Harness bounds each call of a Harness method. Default: 2 minutes.
	Harness time.Duration

	// Settle bounds the wait for the number of goroutines to come back down in
	// NoGoroutineLeak. Default: 1 minute.
	Settle time.Duration

	// Scale bounds each phase (engage all, disengage all) of the Scale test. Default: 5
	// minutes.
	Scale time.Duration

	// Run bounds the whole run, so that a broken provider still gets its summary and report
	// before go test's -timeout (10 minutes by default) kills the test binary. When it runs out,
	// the test running is interrupted ("errored"), the rest are "skipped", and the report is
	// marked incomplete. The run also ends RunReserve before go test's deadline, whatever Run
	// says. Default: 9 minutes.
	Run time.Duration
}

// Default values of Options and Timeouts.
const (
	DefaultEngageTimeout    = 2 * time.Minute
	DefaultDisengageTimeout = time.Minute
	DefaultStableWindow     = 5 * time.Second
	DefaultStopTimeout      = time.Minute
	DefaultHarnessTimeout   = 2 * time.Minute
	DefaultSettleTimeout    = time.Minute
	DefaultScaleTimeout     = 5 * time.Minute
	DefaultRunTimeout       = 9 * time.Minute
	DefaultScaleMembers     = 30
	DefaultLeakCycles       = 3
	DefaultLeakTolerance    = 8
)

// RunReserve is how long before go test's deadline (-timeout) a run ends at the latest: the time
// to interrupt a test, clean up and write the summary and the report.
const RunReserve = time.Minute

// withDefaults returns o with every unset field defaulted; it is the only place defaults are
// decided.
func (o Options) withDefaults() Options {
	if o.Mode == "" {
		o.Mode = ModeDirect
	}
	if o.ReportPath == "" {
		o.ReportPath = os.Getenv(ReportEnv)
	}
	if o.NewManager == nil {
		o.NewManager = NewMCRManager
	}
	if o.Output == nil {
		o.Output = os.Stdout
	}
	t := &o.Timeouts
	setDefault(&t.Engage, DefaultEngageTimeout)
	setDefault(&t.Disengage, DefaultDisengageTimeout)
	setDefault(&t.Stable, DefaultStableWindow)
	setDefault(&t.Stop, DefaultStopTimeout)
	setDefault(&t.Harness, DefaultHarnessTimeout)
	setDefault(&t.Settle, DefaultSettleTimeout)
	setDefault(&t.Scale, DefaultScaleTimeout)
	setDefault(&t.Run, DefaultRunTimeout)
	if o.ScaleMembers <= 0 {
		o.ScaleMembers = DefaultScaleMembers
	}
	if o.LeakCycles <= 0 {
		o.LeakCycles = DefaultLeakCycles
	}
	if o.LeakTolerance <= 0 {
		o.LeakTolerance = DefaultLeakTolerance
	}
	return o
}

// Manager is what the suite uses of a multi-cluster manager in ModeManager. The managers of
// mcr.dev/core and of sigs.k8s.io/multicluster-runtime both have these methods.
type Manager interface {
	// Start runs the manager and the provider until ctx ends.
	Start(ctx context.Context) error
	// GetCluster returns an engaged cluster, as a controller gets it.
	GetCluster(ctx context.Context, name multicluster.ClusterName) (cluster.Cluster, error)
	// GetFieldIndexer returns the indexer that indexes every cluster of the fleet.
	GetFieldIndexer() client.FieldIndexer
}

// Runnable is the suite's observer, which NewManager adds to the manager: a runnable that does
// not need leader election and that the manager engages with every cluster. It satisfies the
// runnable interfaces of mcr's manager (manager.Runnable) and of multicluster-runtime's
// (mcmanager.Runnable).
type Runnable interface {
	manager.Runnable
	manager.LeaderElectionRunnable
	multicluster.Aware
}

// NewManagerFunc builds a manager for config (the manager's own cluster) that runs provider,
// and adds r to it.
type NewManagerFunc func(config *rest.Config, provider multicluster.Provider, r Runnable) (Manager, error)

// NewMCRManager is the default of Options.NewManager: an mcr.dev/core manager with metrics
// and health probes off and controller name validation skipped (the suite's managers live
// side by side in one process).
func NewMCRManager(config *rest.Config, provider multicluster.Provider, r Runnable) (Manager, error) {
	mgr, err := mcmanager.New(config, provider, ManagerOptions())
	if err != nil {
		return nil, fmt.Errorf("creating an mcr manager for the provider: %w", err)
	}
	if err := mgr.Add(r); err != nil {
		return nil, fmt.Errorf("adding the suite's runnable to the manager: %w", err)
	}
	return mgr, nil
}

// ManagerOptions returns the controller-runtime manager options the suite's managers use:
// metrics and health probes off, controller name validation skipped. A NewManagerFunc for
// another manager should use them too.
func ManagerOptions() manager.Options {
	return manager.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	}
}

func setDefault(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}

// validate reports options that cannot be right, such as unknown test IDs or features.
func (o Options) validate() error {
	for _, f := range o.Features {
		if f != Core && !slices.Contains(ExtendedFeatures(), f) {
			return fmt.Errorf("conformance: unknown feature %q in Options.Features (known: %v)", f, ExtendedFeatures())
		}
	}
	if o.claims(InPlaceCredentialRefresh) && !o.claims(CredentialRotation) {
		return fmt.Errorf("conformance: %s refines %s: claim both", InPlaceCredentialRefresh, CredentialRotation)
	}
	for _, list := range [][]string{o.Skip, o.Only} {
		for _, id := range list {
			if _, ok := testByID(id); !ok {
				return fmt.Errorf("conformance: unknown test ID %q in Options.Skip or Options.Only", id)
			}
		}
	}
	switch o.Mode {
	case ModeDirect, ModeManager:
	default:
		return fmt.Errorf("conformance: unknown mode %q (want %q or %q)", o.Mode, ModeDirect, ModeManager)
	}
	return nil
}

// claims reports whether the options claim feature f.
func (o Options) claims(f Feature) bool {
	return f == Core || slices.Contains(o.Features, f)
}
