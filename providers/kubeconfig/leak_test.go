// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

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
func TestNeverReportsCredentials(t *testing.T) {
	providertest.RunKubeconfigLeakTest(t, providertest.KubeconfigLeakTest{
		Admin: fleet.Member("m1").Config(),
		Drive: driveMarkedSecrets,
		Report: providertest.LeakReport{
			Logs:   []*providertest.LogBuffer{&logs.LogBuffer},
			Events: []*rest.Config{fleet.Member("hub").Config()},
		},
	})
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

	providertest.MarkedMembers{
		Provider: p,
		Logs:     &plogs,
		Engaged:  aware.count,
		Add: func(i int, m providertest.MarkedKubeconfig) multicluster.ClusterName {
			name := fmt.Sprintf("marked-%d", i)
			putSecret(t, ns, name, m.Kubeconfig)
			return multicluster.ClusterName(name)
		},
		Reported: func(name multicluster.ClusterName, m providertest.MarkedKubeconfig, reason string) {
			waitWarning(t, ns, string(name), reason, m.Field)
		},
		Working:           "rotating",
		WorkingKubeconfig: newData,
		Rotate:            func(kubeconfig []byte) { putSecret(t, ns, "rotating", kubeconfig) },
		Untouched: func(what string) {
			if working.Ctx.Err() != nil || aware.count("rotating") != 2 {
				t.Fatalf("%s disengaged the working instance", what)
			}
		},
		Timeout: waitTimeout,
	}.Drive(t, check, marked, policy == (corekubeconfig.Policy{}))

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
