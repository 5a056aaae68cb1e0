// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi_test

import (
	"fmt"
	"strings"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"

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
func TestNeverReportsCredentials(t *testing.T) {
	providertest.RunKubeconfigLeakTest(t, providertest.KubeconfigLeakTest{
		Admin:  fleet.Member("east").Config(),
		Drive:  driveMarkedClusters,
		Report: providertest.LeakReport{Events: []*rest.Config{fleet.Member("mgmt").Config()}},
	})
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
	first := s.WaitEngaged(t, rot.clusterName())
	writeKubeconfig(t, rot, secondData)
	s.waitDisengagedInstance(t, first)
	working := s.WaitEngaged(t, rot.clusterName())
	waitEvent(t, rot, kit.ReasonCredentialsRotated)

	providertest.MarkedMembers{
		Provider: s.provider,
		Logs:     s.logs,
		Engaged:  s.rec.Count,
		Add: func(i int, m providertest.MarkedKubeconfig) multicluster.ClusterName {
			// A new ready Cluster with the marked kubeconfig.
			c := capiCluster{ns: ns, name: fmt.Sprintf("marked-%d", i)}
			writeKubeconfig(t, c, m.Kubeconfig)
			newCluster(t, ns, c.name, "DockerCluster", nil)
			setInitialized(t, c, true)
			return c.clusterName()
		},
		Reported: func(name multicluster.ClusterName, m providertest.MarkedKubeconfig, reason string) {
			_, n, _ := strings.Cut(string(name), "/")
			waitWarning(t, capiCluster{ns: ns, name: n}, reason, m.Field)
		},
		Working:           rot.clusterName(),
		WorkingKubeconfig: secondData,
		Rotate:            func(kubeconfig []byte) { writeKubeconfig(t, rot, kubeconfig) },
		Untouched: func(what string) {
			if latest, _ := s.rec.Latest(rot.clusterName()); latest != working || !working.Alive() {
				t.Fatalf("%s replaced or disengaged the working instance", what)
			}
		},
		Timeout: waitTimeout,
	}.Drive(t, check, marked, policy == (corekubeconfig.Policy{}))

	// Back to the first credentials, then every Cluster goes.
	writeKubeconfig(t, rot, firstData)
	s.waitDisengagedInstance(t, working)
	last := s.WaitEngaged(t, rot.clusterName())
	providertest.DeleteAll(t, mgmt, &clusterv1.ClusterList{}, client.InNamespace(ns))
	s.WaitDisengaged(t, rot.clusterName(), last)
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
