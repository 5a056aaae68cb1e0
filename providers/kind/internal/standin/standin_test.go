// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package standin_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"mcr.dev/providers/kind/internal/kindtest"
	"mcr.dev/providers/kind/internal/standin"
)

const adminConf = `apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: Y2E=
    server: https://%s-control-plane:6443
  name: %s
contexts:
- context:
    cluster: %s
    user: kubernetes-admin
  name: kubernetes-admin@%s
current-context: kubernetes-admin@%s
users:
- name: kubernetes-admin
  user:
    token: secret-token
`

func conf(name string) []byte {
	return []byte(strings.ReplaceAll(adminConf, "%s", name))
}

// setup builds the stand-in, puts it on PATH and returns its state.
func setup(t *testing.T) standin.State {
	t.Helper()
	bin := t.TempDir()
	if err := kindtest.BuildStandIn(bin); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	state := standin.State{Dir: t.TempDir()}
	t.Setenv(standin.StateDirEnv, state.Dir)
	t.Setenv(standin.TraceEnv, "1")
	return state
}

// The real kind library, auto-detecting its runtime, lists the stand-in's clusters and reads
// their kubeconfigs exactly as it would from docker: host kubeconfigs point at the published
// port, internal ones at the node, entries are named kind-<name>.
func TestKindLibraryAgainstStandIn(t *testing.T) {
	state := setup(t)
	put := func(name string, c standin.Cluster) {
		t.Helper()
		if err := state.Put(name, c); err != nil {
			t.Fatal(err)
		}
	}
	put("alpha", standin.KindCluster("alpha", conf("alpha"), "127.0.0.1", "40001"))

	// An HA cluster: kind reads the API server port of the load balancer.
	ha := standin.KindCluster("ha", conf("ha"), "127.0.0.1", "40002")
	ha.Nodes[0].Ports = nil
	second := ha.Nodes[0]
	second.Name = "ha-control-plane2"
	ha.Nodes = append(ha.Nodes, second,
		standin.Node{Name: "ha-worker", Role: standin.RoleWorker},
		standin.Node{Name: "ha-external-load-balancer", Role: standin.RoleLoadBalancer,
			Ports: map[string][]standin.PortBinding{standin.APIServerPort: {{HostIp: "127.0.0.1", HostPort: "40002"}}}})
	put("ha", ha)

	// Docker Desktop's label wins over the port mapping.
	desktop := standin.KindCluster("desktop", conf("desktop"), "127.0.0.1", "40003")
	desktop.Nodes[0].Labels = map[string]string{"desktop.docker.io/ports/6443/tcp": "10.0.1.7:6443"}
	put("desktop", desktop)

	// A stopped cluster is listed (docker ps -a) but its kubeconfig cannot be read.
	stopped := standin.KindCluster("stopped", conf("stopped"), "127.0.0.1", "40004")
	stopped.Nodes[0].Stopped = true
	put("stopped", stopped)

	detected, err := kindcluster.DetectNodeProvider()
	if err != nil || detected == nil {
		t.Fatalf("kind did not detect the stand-in as docker: %v", err)
	}
	p := kindcluster.NewProvider(detected)

	names, err := p.List()
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if want := []string{"alpha", "desktop", "ha", "stopped"}; !slices.Equal(names, want) {
		t.Errorf("List = %v, want %v", names, want)
	}

	for _, c := range []struct {
		name     string
		internal bool
		server   string
	}{
		{"alpha", false, "https://127.0.0.1:40001"},
		{"alpha", true, "https://alpha-control-plane:6443"},
		{"ha", false, "https://127.0.0.1:40002"},
		{"desktop", false, "https://10.0.1.7:6443"},
	} {
		kc, err := p.KubeConfig(c.name, c.internal)
		if err != nil {
			t.Errorf("KubeConfig(%q, internal=%t): %v", c.name, c.internal, err)
			continue
		}
		for _, want := range []string{"server: " + c.server, "name: kind-" + c.name, "current-context: kind-" + c.name, "token: secret-token"} {
			if !strings.Contains(kc, want) {
				t.Errorf("KubeConfig(%q, internal=%t) lacks %q:\n%s", c.name, c.internal, want, kc)
			}
		}
	}

	if _, err := p.KubeConfig("stopped", false); err == nil || !strings.Contains(err.Error(), "failed to get cluster internal kubeconfig") {
		t.Errorf("KubeConfig of a stopped cluster: got %v, want the exec failure", err)
	}
	if _, err := p.KubeConfig("missing", false); err == nil {
		t.Error("KubeConfig of an unknown cluster succeeded")
	}

	unsupported, err := state.Unsupported()
	if err != nil {
		t.Fatal(err)
	}
	if len(unsupported) > 0 {
		t.Errorf("kind made calls the stand-in does not serve:\n%s", strings.Join(unsupported, "\n"))
	}
	calls, err := os.ReadFile(filepath.Join(state.Dir, "calls.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("docker calls made by kind:\n%s", dedupe(string(calls)))
}

// The stand-in's own commands, as a person or a test would use them.
func TestStandInCommands(t *testing.T) {
	dir := t.TempDir()
	state := standin.State{Dir: dir}
	c := standin.KindCluster("a", conf("a"), "127.0.0.1", "40001")
	c.Nodes = append(c.Nodes, standin.Node{Name: "a-worker", Role: standin.RoleWorker, Stopped: true})
	if err := state.Put("a", c); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string, int) {
		var out, errOut strings.Builder
		code := standin.Run(dir, args, &out, &errOut)
		return out.String(), errOut.String(), code
	}
	for _, c := range []struct {
		args []string
		out  string
		code int
	}{
		{[]string{"-v"}, standin.Version + "\n", 0},
		{[]string{"ps", "--format", "{{.Names}}"}, "a-control-plane\n", 0},
		{[]string{"ps", "-a", "--filter", "label=io.x-k8s.kind.role=worker", "--format", "{{.Names}} {{.State}}"}, "a-worker exited\n", 0},
		{[]string{"port", "a-control-plane", "6443"}, "127.0.0.1:40001\n", 0},
		{[]string{"inspect", "-f", "{{.State.Running}}", "a-control-plane", "a-worker"}, "true\nfalse\n", 0},
		{[]string{"exec", "a-control-plane", "cat", "/nope"}, "", 1},
		{[]string{"exec", "a-worker", "cat", standin.AdminConfPath}, "", 1},
		{[]string{"inspect", "nope"}, "[]\n", 1},
		{[]string{"run", "busybox"}, "", 125},
		{[]string{"info", "--format", "{{.CgroupVersion}} {{json .SecurityOptions}}"}, `2 ["name=seccomp,profile=builtin","name=cgroupns"]` + "\n", 0},
	} {
		out, errOut, code := run(c.args...)
		if out != c.out || code != c.code {
			t.Errorf("docker %s = %q (stderr %q), exit %d; want %q, exit %d", strings.Join(c.args, " "), out, errOut, code, c.out, c.code)
		}
	}
	unsupported, err := state.Unsupported()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(unsupported, []string{"run busybox"}) {
		t.Errorf("unsupported.log = %q, want the one unsupported call", unsupported)
	}
}

func dedupe(log string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
