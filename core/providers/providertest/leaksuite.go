// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
)

// PermissivePolicy is a kubeconfig policy that lets exec and auth-provider plugins, proxies and
// local files through, so that a leak test sees the errors they fail with too (the default
// policy refuses such kubeconfigs before anything runs).
var PermissivePolicy = kubeconfig.Policy{AllowExec: true, AllowExecEnv: "*", AllowAuthProvider: true, AllowProxyURL: true, AllowLocalFiles: true}

// LeakReport is what a leak test scans once the provider has been driven: everything the
// provider and the process reported to the outside world.
type LeakReport struct {
	// Logs are the lines of the provider's loggers; ProcessLogs, the process-wide loggers'
	// lines, are scanned too.
	Logs []*LogBuffer
	// Events are the API servers whose Events (every namespace) are scanned.
	Events []*rest.Config
	// Metrics gathers the metrics to scan. Default: controller-runtime's registry
	// (ctrlmetrics.Registry), where the kit registers every provider's metrics.
	Metrics prometheus.Gatherer
}

// Report scans everything r names and ProcessLogs, then checks (see Check): a test fails for
// every leak, for a source it could not scan, and when nothing was scanned.
func (c *LeakCheck) Report(t *testing.T, r LeakReport) {
	t.Helper()
	if r.Metrics == nil {
		r.Metrics = ctrlmetrics.Registry
	}
	for _, l := range r.Logs {
		if l != &ProcessLogs {
			c.ScanLogs(l)
		}
	}
	c.ScanLogs(&ProcessLogs)
	for _, cfg := range r.Events {
		if err := c.ScanEvents(t.Context(), cfg); err != nil {
			t.Error(err)
		}
	}
	if err := c.ScanMetrics(r.Metrics); err != nil {
		t.Error(err)
	}
	c.Check(t)
	t.Logf("%d texts scanned", c.Scanned())
}

// AllMarkedKubeconfigs returns the kubeconfigs of MarkedKubeconfigs and of
// MarkedPluginKubeconfigs (its plugins in a temporary directory of t), every marker added to c.
func (c *LeakCheck) AllMarkedKubeconfigs(t testing.TB, admin *rest.Config) []MarkedKubeconfig {
	t.Helper()
	marked, err := c.MarkedKubeconfigs(admin)
	if err != nil {
		t.Fatal(err)
	}
	plugins, err := c.MarkedPluginKubeconfigs(admin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return append(marked, plugins...)
}

// KubeconfigLeakTest is the leak test of a provider that reads kubeconfigs from its source of
// truth (Secrets, files, objects that point to Secrets): see RunKubeconfigLeakTest.
type KubeconfigLeakTest struct {
	// Admin is the member API server the marked kubeconfigs point to.
	Admin *rest.Config
	// Policies are the kubeconfig policies the test runs under, by name, each with a provider
	// of its own; nil runs "default" (the zero Policy) and "plugins allowed"
	// (PermissivePolicy).
	Policies map[string]kubeconfig.Policy
	// Drive runs a provider with policy and drives members with the marked kubeconfigs through
	// engage, failure, rotation and removal (MarkedMembers does most of it), scanning what the
	// provider logged and returned into check. It may fail t.
	Drive func(t *testing.T, check *LeakCheck, marked []MarkedKubeconfig, policy kubeconfig.Policy)
	// Report is what is scanned once every policy ran.
	Report LeakReport
}

// RunKubeconfigLeakTest plants a marker in every credential field a kubeconfig has and in the
// output of exec credential plugins (AllMarkedKubeconfigs: scripts that print a marked token,
// print it in output that is not JSON or does not decode, or fail after printing it), runs
// lt.Drive under each policy in parallel (subtests "policies/<name>") and then scans lt.Report
// for the markers.
func RunKubeconfigLeakTest(t *testing.T, lt KubeconfigLeakTest) {
	t.Helper()
	check := NewLeakCheck()
	marked := check.AllMarkedKubeconfigs(t, lt.Admin)
	policies := lt.Policies
	if policies == nil {
		policies = map[string]kubeconfig.Policy{"default": {}, "plugins allowed": PermissivePolicy}
	}
	t.Run("policies", func(t *testing.T) {
		for name, policy := range policies {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				lt.Drive(t, check, marked, policy)
			})
		}
	})
	check.Report(t, lt.Report)
}

// MarkedMembers drives members with marked kubeconfigs through a running provider (see
// Drive): each is refused and reported, never engaged and unknown to Get, and a working member
// rotated to it keeps its engaged instance and reports a problem that rotating back resolves.
type MarkedMembers struct {
	// Provider is the provider under test.
	Provider multicluster.Provider
	// Logs are the provider's log lines.
	Logs *LogBuffer
	// Engaged returns how often the provider engaged name.
	Engaged func(name multicluster.ClusterName) int
	// Add adds member i with m's kubeconfig to the source of truth and returns its name.
	Add func(i int, m MarkedKubeconfig) multicluster.ClusterName
	// Reported waits until the provider has reported name as refused; reason is m.Reason under
	// the default policy and empty otherwise (plugins and proxies fail in ways of their own).
	Reported func(name multicluster.ClusterName, m MarkedKubeconfig, reason string)
	// Working is an engaged member; Rotate gives it another kubeconfig, WorkingKubeconfig the
	// one it is engaged with. Untouched fails the test when its engaged instance was replaced
	// or disengaged.
	Working           multicluster.ClusterName
	WorkingKubeconfig []byte
	Rotate            func(kubeconfig []byte)
	Untouched         func(what string)
	// Timeout bounds each wait.
	Timeout time.Duration
}

// Drive adds and rotates to every marked kubeconfig in turn, scanning Get's errors into check.
// With the zero policy (default true) a refused member is reported with the kubeconfig's
// Reason.
func (m MarkedMembers) Drive(t *testing.T, check *LeakCheck, marked []MarkedKubeconfig, defaultPolicy bool) {
	t.Helper()
	for i, v := range marked {
		// A new member with the marked kubeconfig fails with a reported problem.
		reason := ""
		if defaultPolicy {
			reason = v.Reason
		}
		name := m.Add(i, v)
		m.Reported(name, v, reason)
		if n := m.Engaged(name); n != 0 {
			t.Errorf("%s: a kubeconfig with a marked %s was engaged", name, v.Field)
		}
		check.ScanError("Get error", GetNotFound(t, m.Provider, name))

		// Rotating the working member to it fails too and keeps the working instance; rotating
		// back resolves the problem, so that the next marked kubeconfig is reported anew.
		RotateThroughProblem(t, m.Logs, m.Working, "a marked "+v.Field, m.Timeout,
			func() { m.Rotate(v.Kubeconfig) }, func() { m.Rotate(m.WorkingKubeconfig) })
		m.Untouched("a rotation to a marked " + v.Field)
	}
}

// GetNotFound calls p.Get(name), fails t unless it reports multicluster.ErrClusterNotFound, and
// returns the error (to scan for leaks).
func GetNotFound(t testing.TB, p multicluster.Provider, name multicluster.ClusterName) error {
	t.Helper()
	_, err := p.Get(t.Context(), name)
	if !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Errorf("Get(%s) = %v, want ErrClusterNotFound", name, err)
	}
	return err
}

// ProblemLogged is the text of the log line with which the kit reports that a member cannot be
// engaged; ProblemResolvedLogged the one of its resolution.
const (
	ProblemLogged         = "cannot be engaged"
	ProblemResolvedLogged = "problem resolved"
)

// RotateThroughProblem calls toProblem, which gives the engaged member cluster credentials it
// cannot use, waits until logs report a new problem of cluster, then calls back, which restores
// working ones, and waits until logs report the problem resolved. what names the problem in
// failure messages.
func RotateThroughProblem(t testing.TB, logs *LogBuffer, cluster multicluster.ClusterName, what string, timeout time.Duration, toProblem, back func()) {
	t.Helper()
	key := fmt.Sprintf("%q=%q", "cluster", cluster)
	count := func(text string) int { return len(logs.All(key, text)) }
	problems, resolved := count(ProblemLogged), count(ProblemResolvedLogged)
	toProblem()
	Eventually(t, timeout, "rotation to "+what+" reported", func() error {
		if count(ProblemLogged) == problems {
			return fmt.Errorf("no new problem logged for %s", cluster)
		}
		return nil
	})
	back()
	Eventually(t, timeout, "rotation back from "+what+" resolved", func() error {
		if count(ProblemResolvedLogged) == resolved {
			return fmt.Errorf("no resolution logged for %s", cluster)
		}
		return nil
	})
}

// DeleteAll deletes, with c, every object c lists into list with opts: the last step of a leak
// test, where every member goes at once and its disengagement is reported like the rest.
func DeleteAll(t testing.TB, c client.Client, list client.ObjectList, opts ...client.ListOption) {
	t.Helper()
	if err := c.List(t.Context(), list, opts...); err != nil {
		t.Fatalf("listing the members to delete: %v", err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range items {
		obj, ok := item.(client.Object)
		if !ok {
			t.Fatalf("deleting the members: %T is not a client.Object", item)
		}
		if err := c.Delete(t.Context(), obj); err != nil {
			t.Fatalf("deleting %s: %v", obj.GetName(), err)
		}
	}
}

// ClusterLister is a provider that lists the clusters it has engaged, as every provider on the
// kit does.
type ClusterLister interface {
	ListClusters() []multicluster.ClusterName
}

// WaitNoneEngaged waits up to timeout until p lists no engaged cluster.
func WaitNoneEngaged(t testing.TB, p ClusterLister, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, "every member disengaged", func() error {
		if got := p.ListClusters(); len(got) > 0 {
			return fmt.Errorf("still engaged: %v", got)
		}
		return nil
	})
}
