// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command verifyversions checks that the modules of the workspace agree on the versions of the
// dependencies they share with each other and with the test binaries:
//
//   - every module that requires controller-runtime, multicluster-runtime, a k8s.io module,
//     ginkgo or gomega requires the same version of it as every other module;
//   - all k8s.io staging modules (api, apimachinery, client-go, ...) are at one release,
//     v0.X.Y, matching the kube-apiserver that `make envtest` builds (v1.X.Y);
//   - envtest.KubernetesVersion in core/envtest equals k8s.io/kubernetes in
//     hack/tools/kube-apiserver/go.mod.
//
// It reads go.mod files only (through `go mod edit -json`), so it needs no network.
// `make verify-versions` runs it with the modules of go.work.
//
// Usage: verifyversions module-dir...
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

const (
	kubeAPIServerToolDir = "hack/tools/kube-apiserver"
	envtestVersionFile   = "core/envtest/binaries.go"
)

// aligned reports whether a dependency path must have one version across modules.
func aligned(path string) bool {
	return strings.HasPrefix(path, "k8s.io/") ||
		slices.Contains([]string{
			"sigs.k8s.io/controller-runtime",
			"sigs.k8s.io/multicluster-runtime",
			"github.com/onsi/ginkgo/v2",
			"github.com/onsi/gomega",
		}, path)
}

var (
	stagingRelease = regexp.MustCompile(`^v0\.(\d+)\.(\d+)$`)
	kubeRelease    = regexp.MustCompile(`^v1\.(\d+)\.(\d+)$`)
	envtestConst   = regexp.MustCompile(`KubernetesVersion\s*=\s*"([^"]+)"`)
)

type goMod struct {
	Module  struct{ Path string }
	Require []struct {
		Path    string
		Version string
	}
}

func readGoMod(dir string) (goMod, error) {
	var m goMod
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return m, fmt.Errorf("%s: go mod edit -json: %w", dir, err)
	}
	if err := json.Unmarshal(out, &m); err != nil {
		return m, fmt.Errorf("%s: parsing go mod edit -json: %w", dir, err)
	}
	return m, nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: verifyversions module-dir...")
		os.Exit(2)
	}
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	// versions[path][version] = modules requiring path at version
	versions := map[string]map[string][]string{}
	for _, dir := range os.Args[1:] {
		m, err := readGoMod(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, r := range m.Require {
			if !aligned(r.Path) {
				continue
			}
			if versions[r.Path] == nil {
				versions[r.Path] = map[string][]string{}
			}
			versions[r.Path][r.Version] = append(versions[r.Path][r.Version], m.Module.Path)
		}
	}

	staging := map[string][]string{} // release -> "path in modules" at that release
	for _, path := range sortedKeys(versions) {
		byVersion := versions[path]
		if len(byVersion) > 1 {
			var parts []string
			for _, v := range sortedKeys(byVersion) {
				parts = append(parts, fmt.Sprintf("%s in %s", v, strings.Join(byVersion[v], ", ")))
			}
			fail("%s has several versions: %s", path, strings.Join(parts, "; "))
		}
		for v, modules := range byVersion {
			if strings.HasPrefix(path, "k8s.io/") && stagingRelease.MatchString(v) {
				staging[v] = append(staging[v], fmt.Sprintf("%s in %s", path, strings.Join(modules, ", ")))
			}
		}
	}
	if len(staging) > 1 {
		var parts []string
		for _, v := range sortedKeys(staging) {
			parts = append(parts, fmt.Sprintf("%s: %s", v, strings.Join(staging[v], "; ")))
		}
		fail("k8s.io staging modules are at different releases (require them all at one release, e.g. with go get): %s", strings.Join(parts, " | "))
	}

	tool, err := readGoMod(kubeAPIServerToolDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kubeVersion := ""
	for _, r := range tool.Require {
		if r.Path == "k8s.io/kubernetes" {
			kubeVersion = r.Version
		}
	}
	km := kubeRelease.FindStringSubmatch(kubeVersion)
	if km == nil {
		fail("%s/go.mod: k8s.io/kubernetes version %q is not a v1.X.Y release", kubeAPIServerToolDir, kubeVersion)
	}
	for v := range staging {
		sm := stagingRelease.FindStringSubmatch(v)
		if len(km) == 3 && (sm[1] != km[1] || sm[2] != km[2]) {
			fail("%s does not match kube-apiserver %s that envtest builds (want v0.%s.%s): %s", v, kubeVersion, km[1], km[2], strings.Join(staging[v], "; "))
		}
	}

	src, err := os.ReadFile(filepath.FromSlash(envtestVersionFile))
	if err != nil {
		fail("reading envtest.KubernetesVersion: %v", err)
	} else if m := envtestConst.FindSubmatch(src); m == nil {
		fail("%s does not declare KubernetesVersion", envtestVersionFile)
	} else if string(m[1]) != kubeVersion {
		fail("envtest.KubernetesVersion is %s but %s/go.mod builds k8s.io/kubernetes %s", m[1], kubeAPIServerToolDir, kubeVersion)
	}

	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Println("verify-versions:", p)
		}
		os.Exit(1)
	}
	fmt.Printf("verify-versions: ok (%d modules, %d aligned dependencies, kubernetes %s)\n",
		len(os.Args)-1, len(versions), kubeVersion)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
