// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	corekubeconfig "mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
)

// TestNeverReportsCredentials plants a marker secret in every credential field a kubeconfig
// Secret can carry and drives the Secrets through failure, rotation and removal, under the
// default policy and under one that lets exec and auth-provider plugins and proxies run (so that
// their errors are reported too). The working tokens of a rotation must not leak either. Every
// log line of the process, every Event of the hub, every error the provider returned and the
// metrics are scanned.
//
// Exec credential plugins (scripts of the test) that print a marked token, print it in output
// that is not JSON or does not decode, or fail after printing it, are among the kubeconfigs.
func TestNeverReportsCredentials(t *testing.T) {
	admin := fleet.Member("m1").Config()
	check := providertest.NewLeakCheck()
	marked, err := check.MarkedKubeconfigs(admin)
	if err != nil {
		t.Fatal(err)
	}
	plugins, err := check.MarkedPluginKubeconfigs(admin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	marked = append(marked, plugins...)

	permissive := corekubeconfig.Policy{AllowExec: true, AllowExecEnv: "*", AllowAuthProvider: true, AllowProxyURL: true, AllowLocalFiles: true}
	t.Run("policies", func(t *testing.T) {
		for _, policy := range []struct {
			name   string
			policy corekubeconfig.Policy
		}{{"default", corekubeconfig.Policy{}}, {"plugins allowed", permissive}} {
			t.Run(policy.name, func(t *testing.T) {
				t.Parallel()
				driveMarkedSecrets(t, check, marked, policy.policy)
			})
		}
	})
	check.ScanLogs(&logs.LogBuffer)
	if err := check.ScanEvents(t.Context(), fleet.Member("hub").Config()); err != nil {
		t.Error(err)
	}
	if err := check.ScanMetrics(ctrlmetrics.Registry); err != nil {
		t.Error(err)
	}
	check.Check(t)
	t.Logf("%d texts scanned", check.Scanned())
}

// driveMarkedSecrets runs a provider with policy and drives Secrets through engage, rotation,
// failure with each marked kubeconfig and removal; it scans what the provider logged and
// returned into check.
func driveMarkedSecrets(t *testing.T, check *providertest.LeakCheck, marked []providertest.MarkedKubeconfig, policy corekubeconfig.Policy) {
	ns := newNamespace(t)
	var plogs providertest.LogBuffer
	opts := testOptions(ns)
	opts.Policy = policy
	opts.Logger = plogs.Logger()
	p := newProvider(t, opts)
	aware := newRecordingAware()
	startProvider(t, p, aware)
	defer check.ScanLogs(&plogs)

	// A member engaged with working credentials and rotated to other working ones.
	oldData, oldToken := saKubeconfig(t, "m2", "leak-old")
	newData, newToken := saKubeconfig(t, "m2", "leak-new")
	check.Add(oldToken, newToken)
	putSecret(t, ns, "rotating", oldData)
	first := aware.waitEngaged(t, "rotating", 1)
	putSecret(t, ns, "rotating", newData)
	working := aware.waitEngaged(t, "rotating", 2)
	waitEvent(t, ns, "rotating", kit.ReasonCredentialsRotated)
	eventually(t, waitTimeout, "old instance disengaged", func() error {
		return errNil(first.Ctx.Err() == nil, "the instance with the old token is still engaged")
	})

	logCount := func(parts ...string) int {
		return len(plogs.All(append([]string{`"cluster"="rotating"`}, parts...)...))
	}
	for i, v := range marked {
		// A new Secret with the marked kubeconfig fails with a reported problem.
		name := fmt.Sprintf("marked-%d", i)
		putSecret(t, ns, name, v.Kubeconfig)
		reason := v.Reason
		if policy != (corekubeconfig.Policy{}) {
			reason = "" // plugins and proxies fail in ways of their own
		}
		waitWarning(t, ns, name, reason, v.Field)
		if n := aware.count(multicluster.ClusterName(name)); n != 0 {
			t.Errorf("%s: a kubeconfig with a marked %s was engaged", name, v.Field)
		}
		_, err := p.Get(t.Context(), multicluster.ClusterName(name))
		if !errors.Is(err, multicluster.ErrClusterNotFound) {
			t.Errorf("Get(%s) = %v, want ErrClusterNotFound", name, err)
		}
		check.ScanError("Get error", err)

		// Rotating the working member to it fails too and keeps the working instance; rotating
		// back resolves the problem, so that the next marked kubeconfig is reported anew.
		problems, resolved := logCount("cannot be engaged"), logCount("problem resolved")
		putSecret(t, ns, "rotating", v.Kubeconfig)
		eventually(t, waitTimeout, fmt.Sprintf("rotation to a marked %s reported", v.Field), func() error {
			return errNil(logCount("cannot be engaged") == problems, "no new problem logged")
		})
		putSecret(t, ns, "rotating", newData)
		eventually(t, waitTimeout, fmt.Sprintf("rotation back from a marked %s resolved", v.Field), func() error {
			return errNil(logCount("problem resolved") == resolved, "no resolution logged")
		})
		if working.Ctx.Err() != nil || aware.count("rotating") != 2 {
			t.Fatalf("a rotation to a marked %s disengaged the working instance", v.Field)
		}
	}

	// Back to the first credentials, then every Secret goes.
	putSecret(t, ns, "rotating", oldData)
	last := aware.waitEngaged(t, "rotating", 3)
	secrets, err := hub.CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		if err := hub.CoreV1().Secrets(ns).Delete(t.Context(), s.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, waitTimeout, "every cluster disengaged", func() error {
		if names := p.ListClusters(); len(names) != 0 || last.Ctx.Err() == nil {
			return fmt.Errorf("still engaged: %v", names)
		}
		return nil
	})
	_, err = p.Get(t.Context(), "rotating")
	check.ScanError("Get error", err)

	// The test saw what it meant to: one problem per marked Secret, and one per rotation.
	if got := len(plogs.All("cannot be engaged", `"cluster"="marked-`)); got < len(marked) {
		t.Errorf("%d problems of marked Secrets logged, want %d", got, len(marked))
	}
}

// waitWarning waits for a Warning Event on the named Secret, with reason unless it is empty.
func waitWarning(t *testing.T, ns, secret, reason, what string) {
	t.Helper()
	eventually(t, waitTimeout, fmt.Sprintf("Warning Event %q on Secret %s (%s)", reason, secret, what), func() error {
		list, err := hub.EventsV1().Events(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Name == secret && e.Type == "Warning" && (reason == "" || e.Reason == reason) {
				return nil
			}
			if e.Regarding.Name == secret {
				seen = append(seen, e.Reason)
			}
		}
		return fmt.Errorf("Events on the Secret: %v", seen)
	})
}
