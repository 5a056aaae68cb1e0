// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	kindexec "sigs.k8s.io/kind/pkg/exec"

	"mcr.dev/core/kubeconfig"
)

// The fuzz targets of what the provider reads from the container engine: its command line's
// output, through the kind library, and the kubeconfig kind builds from a node's admin.conf.
// Seeds are in testdata/fuzz/<FuzzName>; `go test -run=^$ -fuzz=FuzzX` runs one.

// FuzzDescribe: the error of a failed engine command is printable (valid UTF-8, one line, no
// control characters), quotes a bounded part of the command's output, never the output of exec,
// and still wraps the original error.
func FuzzDescribe(f *testing.F) {
	f.Fuzz(func(t *testing.T, command string, output []byte, inner string) {
		run := &kindexec.RunError{Command: strings.Fields(command), Output: output, Inner: errors.New(inner)}
		wrapped := fmt.Errorf("failed to list clusters: %w", run)
		err := describe(wrapped)
		msg := err.Error()
		if !errors.Is(err, run) {
			t.Fatalf("describe does not wrap the engine's error")
		}
		requirePrintable(t, msg)
		base := printable(wrapped.Error())
		if !strings.HasPrefix(msg, base) {
			t.Fatalf("describe(%q) = %q does not start with the error's own text %q", wrapped, msg, base)
		}
		// Each byte of output is at most one character, of at most 3 bytes (U+FFFD).
		if extra := len(msg) - len(base); extra > len(": ")+3*maxOutput+len("...") {
			t.Fatalf("describe quotes %d bytes of output, more than %d", extra, maxOutput)
		}
		if slices.Contains(run.Command, "exec") && msg != base {
			t.Fatalf("describe quotes the output of exec: %q", msg)
		}
	})
}

// requirePrintable fails unless msg is valid UTF-8 without control characters.
func requirePrintable(t *testing.T, msg string) {
	t.Helper()
	if !utf8.ValidString(msg) || strings.ContainsFunc(msg, unicode.IsControl) {
		t.Fatalf("error text is not printable: %q", msg)
	}
}

// fakeDocker answers the docker calls the kind library makes to list clusters and read a
// kubeconfig with the content of files next to it: clusters (ps of the cluster label), nodes (ps
// of one cluster's container names), role (inspect of the role label), label (inspect of Docker
// Desktop's port label), ports (inspect of the published API server port) and admin.conf (exec
// cat). When the file fail names the command (ps, inspect or exec), it prints failout to stderr
// and exits 1 instead.
const fakeDocker = `#!/bin/sh
d=$(dirname "$0")
case "$1" in
ps) case "$*" in *'{{.Names}}'*) out=nodes ;; *) out=clusters ;; esac ;;
inspect) case "$*" in *kind.role*) out=role ;; *desktop.docker.io*) out=label ;; *) out=ports ;; esac ;;
exec) out=admin.conf ;;
*) echo "fake docker: unsupported: $*" >&2; exit 125 ;;
esac
if [ "$(cat "$d/fail")" = "$1" ]; then cat "$d/failout" >&2; exit 1; fi
exec cat "$d/$out"
`

// FuzzKindCLI runs the kind library against a container engine whose every answer is fuzzed, and
// the provider's handling of what it returns, as a poll and a sync do: list the clusters, read the
// kubeconfig of the first (for the host, or with bit 2 of fail for the kind network) and load it
// under the hardened policy. Nothing panics or hangs; the list holds kind cluster names only, sorted and unique;
// errors are printable and never quote a credential of the node's admin.conf.
func FuzzKindCLI(f *testing.F) {
	bin := f.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(fakeDocker), 0o700); err != nil {
		f.Fatal(err)
	}
	f.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	write := func(t *testing.T, name string, data []byte) {
		if err := os.WriteFile(filepath.Join(bin, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, clusters, nodes, role, label, ports, adminConf []byte, fail uint8, failOut []byte) {
		// kind runs a command per node: many nodes make slow inputs, not new paths.
		if bytes.Count(nodes, []byte("\n")) > 8 {
			return
		}
		write(t, "clusters", clusters)
		write(t, "nodes", nodes)
		write(t, "role", role)
		write(t, "label", label)
		write(t, "ports", ports)
		write(t, "admin.conf", adminConf)
		write(t, "fail", []byte([]string{"", "ps", "inspect", "exec"}[fail%4]))
		write(t, "failout", failOut)
		public := [][]byte{clusters, nodes, role, label, ports, failOut}
		secrets := adminConfSecrets(adminConf, public, false)

		const timeout = time.Minute
		k := newKindCalls([]kindcluster.ProviderOption{kindcluster.ProviderWithDocker()}, timeout, 1)
		ctx := context.Background()
		names, ignored, err := k.list(ctx)
		if err != nil {
			requireAnswered(t, err)
			requirePrintable(t, err.Error())
			return
		}
		if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
			t.Fatalf("list = %q, want sorted and unique", names)
		}
		for _, name := range names {
			if !validName.MatchString(name) {
				t.Fatalf("list = %q holds %q, which is no kind cluster name", names, name)
			}
		}
		for _, name := range ignored {
			requirePrintable(t, name)
		}
		if len(names) == 0 {
			return
		}
		// One read per input: each runs about eight commands.
		data, err := k.kubeconfig(ctx, names[0], fail&4 != 0)
		if err == nil {
			_, err = kubeconfig.Load(data, kubeconfig.Policy{})
		} else {
			requireAnswered(t, err)
			requirePrintable(t, err.Error())
		}
		if err != nil {
			for _, s := range secrets {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("an error quotes the admin.conf credential %q: %v", s, err)
				}
			}
		}
		if !k.wait(timeout) {
			t.Fatal("engine calls still running")
		}
	})
}

// FuzzKindKubeconfig loads kubeconfig bytes as a sync loads what kind read from a node, under the
// default (hardened) policy: nothing panics; what loads runs no program, reads no local file,
// loads no auth-provider plugin and verifies TLS, whatever the node's admin.conf said; and no
// error quotes one of its credentials.
func FuzzKindKubeconfig(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := kubeconfig.Load(data, kubeconfig.Policy{})
		if err != nil {
			for _, s := range adminConfSecrets(data, nil, true) {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("an error quotes the credential %q: %v", s, err)
				}
			}
			return
		}
		if cfg.ExecProvider != nil || cfg.AuthProvider != nil || cfg.Insecure ||
			cfg.CAFile != "" || cfg.CertFile != "" || cfg.KeyFile != "" || cfg.BearerTokenFile != "" {
			t.Fatalf("the hardened policy let through %+v", cfg)
		}
	})
}

// requireAnswered fails when the fake engine, which answers at once, did not answer in time.
func requireAnswered(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, errNoAnswer) {
		t.Fatalf("no answer from the fake container engine: %v", err)
	}
}

// scalarLine finds the scalar values of a kubeconfig written as YAML, by key.
var scalarLine = regexp.MustCompile(`(?m)^[\s-]*"?([A-Za-z0-9_.-]+)"?\s*:[ \t]*"?([^\s"{}\[\]]+)`)

// adminConfSecrets returns what errors must never hold of an admin.conf: each of its values
// (credentials, or a credential where a name belongs) long enough to be told apart from the words
// of error messages, whole, and as YAML decoder errors quote it (the first 7 bytes and "...",
// in backquotes). Values that are part of a server, of the engine's other answers (public) or,
// with namesArePublic, of an entry's name are left out: errors quote those by design. Names are
// public in a kubeconfig kind has built; those of an admin.conf, kind replaces.
func adminConfSecrets(adminConf []byte, public [][]byte, namesArePublic bool) []string {
	names := []string{"name", "cluster", "user", "context", "current-context", "namespace"}
	var values [][2]string
	for _, m := range scalarLine.FindAllSubmatch(adminConf, -1) {
		key, v := string(m[1]), string(m[2])
		if key == "server" || key == "proxy-url" || namesArePublic && slices.Contains(names, key) {
			public = append(public, m[2])
			continue
		}
		values = append(values, [2]string{key, v})
	}
	var out []string
	for _, kv := range values {
		v := kv[1]
		if len(v) < 12 {
			continue
		}
		out = append(out, "`"+v[:7]+"...`")
		if !slices.ContainsFunc(public, func(p []byte) bool { return bytes.Contains(p, []byte(v[:7])) }) {
			out = append(out, v)
		}
	}
	return out
}
