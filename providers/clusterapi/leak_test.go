// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi_test

import (
	"errors"
	"fmt"
	"testing"

	eventsv1 "k8s.io/api/events/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	corekubeconfig "mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterapi"
)

// TestNeverReportsCredentials plants a marker secret in every credential field of a Cluster's
// kubeconfig Secret and drives Clusters through engage, rotation, failure and removal, under
// the default policy and under one that lets exec and auth-provider plugins and proxies run (so
// that their errors are reported too). The working tokens of a rotation must not leak either.
// Every log line of the providers and of controller-runtime and client-go, every Event of the
// management cluster, every error the provider returned and the metrics are scanned.
//
// Exec credential plugins (scripts of the test) that print a marked token, print it in output
// that is not JSON or does not decode, or fail after printing it, are among the kubeconfigs.
func TestNeverReportsCredentials(t *testing.T) {
	admin := fleet.Member("east").Config()
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
				driveMarkedClusters(t, check, marked, policy.policy)
			})
		}
	})
	check.ScanLogs(&processLogs)
	if err := check.ScanEvents(t.Context(), fleet.Member("mgmt").Config()); err != nil {
		t.Error(err)
	}
	if err := check.ScanMetrics(ctrlmetrics.Registry); err != nil {
		t.Error(err)
	}
	check.Check(t)
	t.Logf("%d texts scanned", check.Scanned())
}

// driveMarkedClusters runs a provider with policy and drives Clusters through engage, rotation,
// failure with each marked kubeconfig and removal; it scans what the provider logged and
// returned into check.
func driveMarkedClusters(t *testing.T, check *providertest.LeakCheck, marked []providertest.MarkedKubeconfig, policy corekubeconfig.Policy) {
	ns := namespace(t)
	opts := clusterapi.Options{}
	opts.Policy = policy
	s := start(t, ns, opts)
	defer check.ScanLogs(s.logs)

	// A Cluster engaged with working credentials and rotated to other working ones.
	firstData := serviceAccountKubeconfig(t, "west", ns+"-first")
	secondData := serviceAccountKubeconfig(t, "west", ns+"-second")
	check.Add(tokenOf(t, firstData), tokenOf(t, secondData))
	rot := capiCluster{ns: ns, name: "rot"}
	writeKubeconfig(t, rot, firstData)
	newCluster(t, ns, rot.name, "DockerCluster", nil)
	setInitialized(t, rot, true)
	first := s.waitEngaged(t, rot.clusterName())
	writeKubeconfig(t, rot, secondData)
	s.waitDisengagedInstance(t, first)
	working := s.waitEngaged(t, rot.clusterName())
	waitEvent(t, rot, kit.ReasonCredentialsRotated)

	logCount := func(parts ...string) int {
		return len(s.logs.All(append([]string{`"cluster"="` + string(rot.clusterName()) + `"`}, parts...)...))
	}
	for i, v := range marked {
		// A new ready Cluster with the marked kubeconfig fails with a reported problem.
		c := capiCluster{ns: ns, name: fmt.Sprintf("marked-%d", i)}
		writeKubeconfig(t, c, v.Kubeconfig)
		newCluster(t, ns, c.name, "DockerCluster", nil)
		setInitialized(t, c, true)
		reason := v.Reason
		if policy != (corekubeconfig.Policy{}) {
			reason = "" // plugins and proxies fail in ways of their own
		}
		waitWarning(t, c, reason, v.Field)
		if n := s.rec.Count(c.clusterName()); n != 0 {
			t.Errorf("%s: a kubeconfig with a marked %s was engaged", c.name, v.Field)
		}
		_, err := s.provider.Get(t.Context(), c.clusterName())
		if !errors.Is(err, multicluster.ErrClusterNotFound) {
			t.Errorf("Get(%s) = %v, want ErrClusterNotFound", c.name, err)
		}
		check.ScanError("Get error", err)

		// Rotating the working Cluster to it fails too and keeps the working instance; rotating
		// back resolves the problem, so that the next marked kubeconfig is reported anew.
		problems, resolved := logCount("cannot be engaged"), logCount("problem resolved")
		writeKubeconfig(t, rot, v.Kubeconfig)
		eventually(t, fmt.Sprintf("rotation to a marked %s reported", v.Field), func() error {
			return errIf(logCount("cannot be engaged") == problems, "no new problem logged")
		})
		writeKubeconfig(t, rot, secondData)
		eventually(t, fmt.Sprintf("rotation back from a marked %s resolved", v.Field), func() error {
			return errIf(logCount("problem resolved") == resolved, "no resolution logged")
		})
		if latest, _ := s.rec.Latest(rot.clusterName()); latest != working || !working.Alive() {
			t.Fatalf("a rotation to a marked %s replaced or disengaged the working instance", v.Field)
		}
	}

	// Back to the first credentials, then every Cluster goes.
	writeKubeconfig(t, rot, firstData)
	s.waitDisengagedInstance(t, working)
	last := s.waitEngaged(t, rot.clusterName())
	var list clusterv1.ClusterList
	if err := mgmt.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if err := mgmt.Delete(t.Context(), &list.Items[i]); err != nil {
			t.Fatal(err)
		}
	}
	s.waitDisengaged(t, rot.clusterName(), last)
	if got := s.provider.ListClusters(); len(got) != 0 {
		t.Errorf("ListClusters() = %v after deleting every Cluster", got)
	}
	_, err := s.provider.Get(t.Context(), rot.clusterName())
	check.ScanError("Get error", err)

	// The test saw what it meant to: one problem logged per marked Cluster.
	if got := len(s.logs.All("cannot be engaged", `"cluster"="`+ns+`/marked-`)); got < len(marked) {
		t.Errorf("%d problems of marked Clusters logged, want %d", got, len(marked))
	}
}

// waitWarning waits for a Warning Event on c, with reason unless it is empty.
func waitWarning(t *testing.T, c capiCluster, reason, what string) {
	t.Helper()
	eventually(t, fmt.Sprintf("Warning Event %q on Cluster %s (%s)", reason, c.name, what), func() error {
		var list eventsv1.EventList
		if err := mgmt.List(t.Context(), &list, client.InNamespace(c.ns)); err != nil {
			return err
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind != "Cluster" || e.Regarding.Name != c.name {
				continue
			}
			if e.Type == "Warning" && (reason == "" || e.Reason == reason) {
				return nil
			}
			seen = append(seen, e.Reason)
		}
		return fmt.Errorf("Events on the Cluster: %v", seen)
	})
}

func errIf(failed bool, msg string) error {
	if failed {
		return errors.New(msg)
	}
	return nil
}
