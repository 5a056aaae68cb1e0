// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The example a consumer copies: the smallest standalone program of examples/. It imports
// mcr.dev/core (with its envtest fleet) and the file and kind providers, and by default starts a
// fleet of real kube-apiservers, reconciles across it and exits.
const (
	consumerExample        = "examples/quickstart"
	consumerExampleImports = "mcr.dev/providers/file mcr.dev/providers/kind"
)

// The commands a user installs with `go install module/path@version`, how to run each so that
// it answers without doing anything, and what it then prints.
var consumerCommands = []struct{ path, arg, want string }{
	{"mcr.dev/conformance/cmd/verify", "", "usage: verify report.yaml"}, // no flags: it takes report files
	{"mcr.dev/providers/kubeconfig/cmd/kubeconfig-secret", "-h", "  -"},
	{"mcr.dev/providers/clusterprofile/cmd/clusterprofile-token-plugin", "-h", "  -"},
}

// checkConsumer plays a user of the release in repo (the clone the release was made in) who
// starts from an empty module outside the repository, with no go.work and no replace
// directive, and resolves the modules through the proxy the release wrote, as documented in
// README.md ("Install"): `go get` of core and two providers, a controller copied from an
// example that builds and reconciles across real kube-apiservers, and `go install` of the
// commands at the version.
func checkConsumer(t *testing.T, repo, proxy string, v version) {
	root := gitT(t, ".", "rev-parse", "--show-toplevel")
	dir := t.TempDir()
	if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") {
		t.Fatalf("the consumer module %s is inside the repository %s", dir, root)
	}
	bin := t.TempDir()
	t.Cleanup(func() {
		if err := removeFromModCache([]module{{Path: "mcr.dev/core"}}, v); err != nil {
			t.Error(err)
		}
	})
	env := append(environ(),
		"GOWORK=off",
		"GOBIN="+bin,
		// -mod=mod lets go build add what the copied program imports, as a user's first build
		// does; -modcacherw lets the test remove the release from the module cache. The module
		// cache is the shared one so that later runs find the consumer's packages in the build
		// cache (a package's build depends on its directory): its build list is smaller than the
		// workspace's, with other versions of shared dependencies, so the first run compiles
		// Kubernetes' packages for it once (minutes on two cores).
		"GOFLAGS=-mod=mod -modcacherw",
		"GOPROXY=file://"+filepath.ToSlash(proxy)+","+goEnv(t, "GOPROXY"),
		// The checksum database knows only published modules: the release's hashes are
		// checked against its zips below instead. Every other module is still checked as
		// usual (from the module cache's record of the database where it cannot be reached).
		"GONOSUMDB=mcr.dev",
	)
	run := func(timeout time.Duration, name string, args ...string) (string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir, cmd.Env = dir, env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		t.Logf("%s %s: %v (%s)", filepath.Base(name), strings.Join(args, " "), err, time.Since(start).Round(time.Millisecond))
		return string(out), err
	}
	goCmd := func(args ...string) string {
		t.Helper()
		out, err := run(30*time.Minute, "go", args...)
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(out)
	}
	at := func(paths ...string) []string {
		var args []string
		for _, p := range paths {
			args = append(args, p+"@"+v.String())
		}
		return args
	}

	goCmd("mod", "init", "example.com/consumer")
	goCmd(append([]string{"get"}, at("mcr.dev/core", "mcr.dev/providers/kubeconfig", "mcr.dev/providers/clusterprofile")...)...)

	// The example, copied as a user copies it: its Go files but its tests.
	files, err := filepath.Glob(filepath.Join(repo, consumerExample, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	copied := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(`"mcr.dev/examples/`)) {
			t.Fatalf("%s imports mcr.dev/examples, which is not released: the example does not stand alone", f)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		copied++
	}
	if copied == 0 {
		t.Fatalf("no Go file in %s to copy", consumerExample)
	}
	goCmd(append([]string{"get"}, at(strings.Fields(consumerExampleImports)...)...)...)
	goCmd("build", "-o", filepath.Join(bin, "controller"), ".")
	// The providers the user got build too, though the example does not import them.
	goCmd("build", "mcr.dev/providers/kubeconfig/...", "mcr.dev/providers/clusterprofile/...")

	// Every mcr.dev module is the release's, from the proxy, not replaced.
	got := goCmd("list", "-m", "-f", "{{.Path}} {{.Version}}{{with .Replace}} => {{.Path}}{{end}}", "mcr.dev/...")
	var want []string
	for _, p := range []string{"mcr.dev/conformance", "mcr.dev/core", "mcr.dev/providers/clusterprofile", "mcr.dev/providers/file", "mcr.dev/providers/kind", "mcr.dev/providers/kubeconfig"} {
		want = append(want, p+" "+v.String())
	}
	if gotLines := strings.Split(got, "\n"); !slices.Equal(gotLines, want) {
		t.Errorf("the consumer's mcr.dev modules:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(gomod, []byte("replace")) {
		t.Errorf("the consumer's go.mod has a replace directive:\n%s", gomod)
	}

	// The commands install at the version and run.
	for _, c := range consumerCommands {
		goCmd(append([]string{"install"}, at(c.path)...)...)
		var args []string
		if c.arg != "" {
			args = append(args, c.arg)
		}
		name := filepath.Base(c.path)
		// Asking for help exits 0, 1 or 2 depending on the command's flag handling; a crash or
		// a missing binary does not print the usage.
		out, err := run(time.Minute, filepath.Join(bin, name), args...)
		if !strings.Contains(out, c.want) || strings.Contains(out, "panic:") {
			t.Errorf("%s %s (%v) printed no usage (%q):\n%s", name, c.arg, err, c.want, out)
		}
	}

	// The controller reconciles across a fleet of real kube-apiservers it starts; it says how
	// many clusters it marked, then "Done.".
	env = append(env, envtestAssets(t, repo)...)
	out, err := run(4*time.Minute, filepath.Join(bin, "controller"), "-clusters", "2", "-timeout", "3m")
	if err != nil {
		t.Fatalf("the copied controller failed: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Reconciled 2 clusters:") || !strings.Contains(out, "Done.") {
		t.Errorf("the copied controller did not report reconciling both clusters:\n%s", out)
	}
}

// envtestAssets returns the environment that points the copied controller's fleet at the
// test binaries: the caller's KUBEBUILDER_ASSETS or MCR_ENVTEST_ASSETS if either is set,
// otherwise the repository's bin/envtest/<version> (make envtest), which a program outside the
// repository cannot find by itself.
func envtestAssets(t *testing.T, repo string) []string {
	t.Helper()
	for _, key := range []string{"MCR_ENVTEST_ASSETS", "KUBEBUILDER_ASSETS"} {
		if os.Getenv(key) != "" {
			return nil
		}
	}
	src, err := os.ReadFile(filepath.Join(repo, "core", "envtest", "binaries.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^const KubernetesVersion = "([^"]+)"$`).FindSubmatch(src)
	if m == nil {
		t.Fatal("core/envtest/binaries.go declares no KubernetesVersion")
	}
	dir := filepath.Join(gitT(t, ".", "rev-parse", "--show-toplevel"), "bin", "envtest", string(m[1]))
	if _, err := os.Stat(filepath.Join(dir, "kube-apiserver")); err != nil {
		t.Fatalf("no test binaries for the copied controller (make envtest): %v", err)
	}
	return []string{fmt.Sprintf("MCR_ENVTEST_ASSETS=%s", dir)}
}
