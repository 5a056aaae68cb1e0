// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kind_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kind"
	"mcr.dev/providers/kind/internal/kindtest"
	"mcr.dev/providers/kind/internal/standin"
)

// Clusters that exist when the provider starts are engaged, and so is a cluster created later,
// each under its kind cluster name and reaching its own apiserver; a new cluster leaves the
// engaged ones alone.
func TestEngagesExistingAndNewClusters(t *testing.T) {
	kc := useStandIn(t)
	create(t, kc, "fleet-a", "east")
	create(t, kc, "fleet-b", "west")

	s := start(t, kind.Options{})
	s.waitEngaged(t, "fleet-a", "fleet-b")
	s.requireReaches(t, "fleet-a", "east")
	s.requireReaches(t, "fleet-b", "west")
	a, b := s.current(t, "fleet-a"), s.current(t, "fleet-b")

	create(t, kc, "fleet-c", "north")
	s.waitEngaged(t, "fleet-a", "fleet-b", "fleet-c")
	s.requireReaches(t, "fleet-c", "north")
	waitCalls(t, kc, 2, kubeconfigRead("fleet-a")...)
	s.RequireUntouched(t, "fleet-a", a)
	s.RequireUntouched(t, "fleet-b", b)
}

// A kind cluster deleted and created again under the same name has new credentials (and here a
// different apiserver): the provider re-engages it. A change of its containers that leaves the
// kubeconfig as it was (a worker node added) re-engages nothing.
func TestReengagesRecreatedCluster(t *testing.T) {
	kc := useStandIn(t)
	create(t, kc, "fleet-a", "east")
	logs := &logBuffer{}
	s := start(t, kind.Options{Options: kit.Options{Logger: logs.Logger()}})
	s.waitEngaged(t, "fleet-a")
	first := s.current(t, "fleet-a")

	if err := kc.Update("fleet-a", func(c *standin.Cluster) {
		c.Nodes = append(c.Nodes, standin.Node{Name: "fleet-a-worker", Role: standin.RoleWorker})
	}); err != nil {
		t.Fatal(err)
	}
	waitCalls(t, kc, 2, kubeconfigRead("fleet-a")...)
	s.RequireUntouched(t, "fleet-a", first)

	// kind delete cluster --name fleet-a && kind create cluster --name fleet-a, between polls.
	create(t, kc, "fleet-a", "west")
	eventually(t, "the first fleet-a disengaged", func() error { return errIfAlive(first) })
	s.waitEngaged(t, "fleet-a")
	s.requireReaches(t, "fleet-a", "west")
	second := s.current(t, "fleet-a")
	if second.Cluster == first.Cluster {
		t.Fatal("fleet-a was re-engaged with the old cluster instance")
	}
	if _, err := logs.Find("Re-engaged cluster", `"cluster"="fleet-a"`); err != nil {
		t.Error(err)
	}

	// Same apiserver, new credentials: a ServiceAccount token instead of the admin certificate.
	sa, err := fleet.Member("west").ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{Name: "kind-recreate"})
	if err != nil {
		t.Fatal(err)
	}
	if err := kc.Create("fleet-a", sa); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second fleet-a disengaged", func() error { return errIfAlive(second) })
	s.waitEngaged(t, "fleet-a")
	s.requireReaches(t, "fleet-a", "west")
	third := s.current(t, "fleet-a")
	if user, err := providertest.UserOf(t.Context(), third.Cluster.GetConfig()); err != nil || user != "system:serviceaccount:mcr-system:kind-recreate" {
		t.Errorf("the re-engaged fleet-a does not use the new token credentials: %q, %v", user, err)
	}
}

// A deleted kind cluster is disengaged, Get no longer finds it, and the others stay as they were.
func TestDisengagesDeletedCluster(t *testing.T) {
	kc := useStandIn(t)
	create(t, kc, "fleet-a", "east")
	create(t, kc, "fleet-b", "west")
	logs := &logBuffer{}
	s := start(t, kind.Options{Options: kit.Options{Logger: logs.Logger()}})
	s.waitEngaged(t, "fleet-a", "fleet-b")
	a, b := s.current(t, "fleet-a"), s.current(t, "fleet-b")

	if err := kc.Delete("fleet-a"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "fleet-a disengaged", func() error { return errIfAlive(a) })
	if _, err := s.provider.Get(context.Background(), "fleet-a"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Errorf("Get(fleet-a) after delete: %v, want ErrClusterNotFound", err)
	}
	s.waitEngaged(t, "fleet-b")
	s.RequireUntouched(t, "fleet-b", b)
	// The provider logs after it has canceled the engagement.
	eventually(t, "disengage logged", func() error {
		_, err := logs.Find("Disengaged cluster", `"cluster"="fleet-a"`)
		return err
	})

	// Created again after a delete that the provider saw: engaged anew.
	create(t, kc, "fleet-a", "north")
	s.waitEngaged(t, "fleet-a", "fleet-b")
	s.requireReaches(t, "fleet-a", "north")
}

// Only clusters whose names start with the prefix are engaged, under their full names; the
// kubeconfigs of the others are never even read. The container engine is named by
// $KIND_EXPERIMENTAL_PROVIDER, as for the kind command line.
func TestPrefix(t *testing.T) {
	t.Setenv("KIND_EXPERIMENTAL_PROVIDER", "docker")
	kc := useStandIn(t)
	create(t, kc, "fleet-a", "east")
	create(t, kc, "dev", "west")

	s := start(t, kind.Options{Prefix: "fleet-"})
	s.waitEngaged(t, "fleet-a")
	create(t, kc, "fleet-b", "north")
	create(t, kc, "devfleet-c", "north")
	s.waitEngaged(t, "fleet-a", "fleet-b")
	waitCalls(t, kc, 2, listCall...)
	s.waitEngaged(t, "fleet-a", "fleet-b")
	for _, name := range []string{"dev", "devfleet-c"} {
		if n := calls(t, kc, kubeconfigRead(name)...); n != 0 {
			t.Errorf("the kubeconfig of %q, which lacks the prefix, was read %d times", name, n)
		}
	}
}

// The cluster list is the cluster label of every container, whoever made it. Entries that are no
// kind cluster names are ignored and logged once: an empty one, which kind would read as its
// default cluster "kind" (so that a member "" would be engaged with that cluster's credentials),
// and names kind refuses, which would change the engine's label filter.
func TestIgnoresEntriesThatAreNoKindClusterNames(t *testing.T) {
	kc := useStandIn(t)
	create(t, kc, "fleet-a", "east")
	create(t, kc, "kind", "west")
	if err := kc.Update("fleet-a", func(c *standin.Cluster) {
		for name, label := range map[string]string{"stray": "", "upper": "Fleet_B", "filter": "x=y,z"} {
			c.Nodes = append(c.Nodes, standin.Node{Name: name, Role: standin.RoleWorker, Labels: map[string]string{standin.ClusterLabel: label}})
		}
	}); err != nil {
		t.Fatal(err)
	}

	logs := &logBuffer{}
	s := start(t, kind.Options{Options: kit.Options{Logger: logs.Logger()}})
	s.waitEngaged(t, "fleet-a", "kind")
	waitCalls(t, kc, 2, listCall...)
	s.waitEngaged(t, "fleet-a", "kind")
	line, err := logs.Find("Ignoring containers labeled as kind nodes")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`\"\"`, "Fleet_B", "x=y,z"} {
		if !strings.Contains(line, want) {
			t.Errorf("log line %q does not name %s", line, want)
		}
	}
	if n := len(logs.All("Ignoring containers labeled as kind nodes")); n != 1 {
		t.Errorf("the ignored names were logged %d times, want once", n)
	}
}

// One broken cluster never stops the others: a stopped node container (its kubeconfig cannot be
// read), a wedged one (reading never answers), an unreachable apiserver and a kubeconfig that
// the policy refuses are each logged under their name, once, while the good clusters are
// engaged; fixed clusters are engaged at a later poll.
func TestBrokenClustersDoNotStopOthers(t *testing.T) {
	kc := useStandIn(t)
	create(t, kc, "good", "east")

	create(t, kc, "stopped", "west")
	update(t, kc, "stopped", func(n *standin.Node) { n.Stopped = true })

	create(t, kc, "wedged", "north")
	release := filepath.Join(kc.State.Dir, "wedged.release")
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	update(t, kc, "wedged", func(n *standin.Node) { n.ExecHangs = "wedged.release" })

	create(t, kc, "unreachable", "east")
	update(t, kc, "unreachable", func(n *standin.Node) {
		n.Ports[standin.APIServerPort][0].HostPort = strconv.Itoa(closedPort(t))
	})

	create(t, kc, "refused", "west")
	update(t, kc, "refused", func(n *standin.Node) {
		n.Files[standin.AdminConfPath] = strings.Replace(n.Files[standin.AdminConfPath],
			"client-certificate-data:", "tokenFile: /var/run/secrets/token\n    client-certificate-data:", 1)
	})

	logs := &logBuffer{}
	s := start(t, kind.Options{CommandTimeout: 2 * time.Second, Options: kit.Options{Logger: logs.Logger(), CacheSyncTimeout: 3 * time.Second}})
	t.Cleanup(func() { _ = os.Remove(release) }) // runs before the provider stops: no process left behind
	s.waitEngaged(t, "good")
	s.requireReaches(t, "good", "east")
	good := s.current(t, "good")

	for _, c := range []struct{ cluster, message string }{
		{"stopped", "failed to get cluster internal kubeconfig"},
		{"wedged", "no answer from the container engine within 2s"},
		{"unreachable", "the member did not answer"},
		{"refused", "set Policy.AllowLocalFiles to allow it"},
	} {
		eventually(t, "error logged for "+c.cluster, func() error {
			_, err := logs.Find("Kind cluster cannot be engaged", `"cluster"="`+c.cluster+`"`, c.message)
			return err
		})
	}
	// The wedged read is joined by later polls, not repeated: one stuck process, not one per poll.
	eventually(t, "a second failed attempt on the wedged cluster", func() error {
		_, err := logs.Find("Kind cluster still cannot be engaged", `"cluster"="wedged"`)
		return err
	})
	if n := calls(t, kc, kubeconfigRead("wedged")...); n != 1 {
		t.Errorf("the wedged cluster's kubeconfig read was started %d times while it hung, want once", n)
	}
	// Logged once, although every poll fails again.
	waitCalls(t, kc, 3, kubeconfigRead("stopped")...)
	if n := len(logs.All("Kind cluster cannot be engaged", `"cluster"="stopped"`)); n != 1 {
		t.Errorf("the stopped cluster's problem was logged %d times, want once", n)
	}
	// Never a credential or a value from a kubeconfig in the log (LS0t is base64 of "---").
	for _, secret := range []string{"LS0t", "BEGIN", "/var/run/secrets/token"} {
		for _, l := range logs.All(secret) {
			t.Errorf("a log line quotes kubeconfig values: %s", l)
		}
	}
	s.RequireUntouched(t, "good", good)

	// Fix two of them: they are engaged; the good one is still untouched.
	update(t, kc, "stopped", func(n *standin.Node) { n.Stopped = false })
	update(t, kc, "wedged", func(n *standin.Node) { n.ExecHangs = "" })
	if err := os.Remove(release); err != nil {
		t.Fatal(err)
	}
	s.waitEngaged(t, "good", "stopped", "wedged")
	s.requireReaches(t, "stopped", "west")
	s.requireReaches(t, "wedged", "north")
	s.RequireUntouched(t, "good", good)
	if _, err := logs.Find("Kind cluster problem resolved", `"cluster"="stopped"`); err != nil {
		t.Error(err)
	}
}

// An engaged cluster whose kubeconfig cannot be read for a while (its container stopped) stays
// engaged as it was; once it is deleted it is disengaged.
func TestEngagedClusterSurvivesUnreadableKubeconfig(t *testing.T) {
	kc := useStandIn(t)
	create(t, kc, "fleet-a", "east")
	s := start(t, kind.Options{})
	s.waitEngaged(t, "fleet-a")
	a := s.current(t, "fleet-a")

	update(t, kc, "fleet-a", func(n *standin.Node) { n.Stopped = true })
	waitCalls(t, kc, 3, kubeconfigRead("fleet-a")...)
	s.RequireUntouched(t, "fleet-a", a)

	update(t, kc, "fleet-a", func(n *standin.Node) { n.Stopped = false })
	waitCalls(t, kc, 2, kubeconfigRead("fleet-a")...)
	s.RequireUntouched(t, "fleet-a", a)

	if err := kc.Delete("fleet-a"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "fleet-a disengaged", func() error { return errIfAlive(a) })
}

// When listing fails (the engine does not answer properly), every engaged cluster stays as it
// is, the failure is logged once, and the provider carries on when listing works again.
func TestListFailureChangesNothing(t *testing.T) {
	kc := useStandIn(t)
	create(t, kc, "fleet-a", "east")
	logs := &logBuffer{}
	s := start(t, kind.Options{Options: kit.Options{Logger: logs.Logger()}})
	s.waitEngaged(t, "fleet-a")
	a := s.current(t, "fleet-a")

	// The stand-in fails every call while it cannot read its state.
	broken := filepath.Join(kc.State.Dir, "broken.cluster.json")
	if err := os.WriteFile(broken, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitCalls(t, kc, 3, listCall...)
	eventually(t, "list error logged", func() error {
		_, err := logs.Find("Cannot list kind clusters", "Cannot connect to the Docker daemon")
		return err
	})
	if n := len(logs.All("Cannot list kind clusters")); n != 1 {
		t.Errorf("the list failure was logged %d times, want once", n)
	}
	s.RequireUntouched(t, "fleet-a", a)

	if err := os.Remove(broken); err != nil {
		t.Fatal(err)
	}
	create(t, kc, "fleet-b", "west")
	s.waitEngaged(t, "fleet-a", "fleet-b")
	s.RequireUntouched(t, "fleet-a", a)
	if _, err := logs.Find("Listing kind clusters works again"); err != nil {
		t.Error(err)
	}
}

// Without the chosen container engine nothing is engaged, and the log says why.
func TestMissingContainerEngine(t *testing.T) {
	t.Setenv("KIND_EXPERIMENTAL_PROVIDER", "podman")
	kc := useStandIn(t)
	create(t, kc, "fleet-a", "east")
	logs := &logBuffer{}
	s := start(t, kind.Options{Options: kit.Options{Logger: logs.Logger()}})
	eventually(t, "list error logged", func() error {
		_, err := logs.Find("Cannot list kind clusters", "podman")
		return err
	})
	if got := s.rec.Engaged(); len(got) != 0 {
		t.Errorf("engaged %v without a container engine", got)
	}
}

// With Internal, the provider uses the kubeconfig for the kind network, whose server is the
// one in the node's admin.conf rather than the port published on the host. Here admin.conf
// points straight at the member and the published port is closed, so only the internal
// kubeconfig works.
func TestInternalKubeconfig(t *testing.T) {
	kc := useStandIn(t)
	member := fleet.Member("east")
	adminConf, _, _, err := kindtest.AdminConf("inner", member.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	adminConf = []byte(strings.Replace(string(adminConf), "https://inner-control-plane:6443", member.Host(), 1))
	if err := kc.State.Put("inner", standin.KindCluster("inner", adminConf, "127.0.0.1", strconv.Itoa(closedPort(t)))); err != nil {
		t.Fatal(err)
	}
	s := start(t, kind.Options{Internal: true})
	s.waitEngaged(t, "inner")
	s.requireReaches(t, "inner", "east")
}

// update changes the control-plane node of a stand-in cluster.
func update(t *testing.T, kc kindtest.Clusters, name string, change func(*standin.Node)) {
	t.Helper()
	if err := kc.Update(name, func(c *standin.Cluster) { change(&c.Nodes[0]) }); err != nil {
		t.Fatal(err)
	}
}

// closedPort returns a local port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

func errIfAlive(e *engagement) error {
	if e.Ctx.Err() == nil {
		return fmt.Errorf("engage context still alive")
	}
	return nil
}
