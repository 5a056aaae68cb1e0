// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// unreleased are the workspace modules (directories relative to the root) that get no tags.
// examples is a set of programs to read and copy, not an API to import: tagging it would
// promise compatibility for code nobody should depend on, and it requires every provider, so a
// dependency on it would pull every ecosystem's modules.
var unreleased = []string{"examples"}

// suiteVersionFile holds conformance.Version, the one place in the tree that carries the
// version being worked towards ("v0.2.0-dev") or released ("v0.1.0").
const suiteVersionFile = "conformance/versions.go"

var suiteVersionPattern = regexp.MustCompile(`(?m)^const Version = "([^"]*)"$`)

// module is a module of go.work.
type module struct {
	Dir  string // slash-separated, relative to the repository root: "core", "providers/kind"
	Path string // module path: "mcr.dev/core"
}

// tagPrefix is what the module's tags start with: "providers/kind/" (tags of a module at the
// repository root have none).
func (m module) tagPrefix() string {
	if m.Dir == "." {
		return ""
	}
	return m.Dir + "/"
}

func (m module) tag(v version) string { return m.tagPrefix() + v.String() }

// workspaceModules reads the modules of root/go.work, in go.work's order.
func workspaceModules(root string) ([]module, error) {
	out, err := command(root, nil, "go", "work", "edit", "-json", "go.work")
	if err != nil {
		return nil, err
	}
	var work struct{ Use []struct{ DiskPath string } }
	if err := json.Unmarshal(out, &work); err != nil {
		return nil, fmt.Errorf("parsing go work edit -json: %w", err)
	}
	var mods []module
	for _, u := range work.Use {
		dir := path.Clean(filepath.ToSlash(u.DiskPath))
		p, err := modulePath(filepath.Join(root, filepath.FromSlash(dir), "go.mod"))
		if err != nil {
			return nil, err
		}
		mods = append(mods, module{Dir: dir, Path: p})
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("%s/go.work uses no modules", root)
	}
	return mods, nil
}

var moduleLine = regexp.MustCompile(`(?m)^module\s+"?([^"\s]+)"?\s*$`)

func modulePath(gomod string) (string, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", fmt.Errorf("reading module path: %w", err)
	}
	m := moduleLine.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("%s has no module line", gomod)
	}
	return string(m[1]), nil
}

func releasedModules(mods []module) []module {
	var out []module
	for _, m := range mods {
		if !slices.Contains(unreleased, m.Dir) {
			out = append(out, m)
		}
	}
	return out
}

// requirements returns the module paths and versions root/dir/go.mod requires.
func requirements(root, dir string) (map[string]string, error) {
	out, err := command(filepath.Join(root, filepath.FromSlash(dir)), nil, "go", "mod", "edit", "-json")
	if err != nil {
		return nil, err
	}
	var gomod struct {
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal(out, &gomod); err != nil {
		return nil, fmt.Errorf("parsing go mod edit -json in %s: %w", dir, err)
	}
	reqs := map[string]string{}
	for _, r := range gomod.Require {
		reqs[r.Path] = r.Version
	}
	return reqs, nil
}

// suiteVersion reads conformance.Version from the tree at root.
func suiteVersion(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, suiteVersionFile))
	if err != nil {
		return "", fmt.Errorf("reading conformance.Version: %w", err)
	}
	m := suiteVersionPattern.FindAllSubmatch(data, -1)
	if len(m) != 1 {
		return "", fmt.Errorf("%s: want one line `const Version = \"...\"`, found %d", suiteVersionFile, len(m))
	}
	return string(m[0][1]), nil
}

func setSuiteVersion(root string, v version) error {
	file := filepath.Join(root, suiteVersionFile)
	if _, err := suiteVersion(root); err != nil {
		return err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("setting conformance.Version: %w", err)
	}
	data = suiteVersionPattern.ReplaceAll(data, []byte(`const Version = "`+v.String()+`"`))
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return fmt.Errorf("setting conformance.Version: %w", err)
	}
	return nil
}

// releaseTags returns the versions of m's tags in the repository at root, oldest first;
// tags that are not semantic versions are left out.
func releaseTags(root string, m module) ([]version, error) {
	out, err := command(root, nil, "git", "tag", "--list", m.tagPrefix()+"v*")
	if err != nil {
		return nil, err
	}
	var vs []version
	for _, t := range strings.Fields(string(out)) {
		v, err := parseVersion(strings.TrimPrefix(t, m.tagPrefix()))
		if err != nil {
			continue // another module's tag under this prefix ("providers/v1.0.0/..."), or noise
		}
		vs = append(vs, v)
	}
	slices.SortFunc(vs, version.compare)
	return vs, nil
}

// previousRelease is m's newest tag that is not a prerelease; ok is false before the first.
func previousRelease(root string, m module) (v version, ok bool, err error) {
	vs, err := releaseTags(root, m)
	if err != nil {
		return version{}, false, err
	}
	for _, v := range slices.Backward(vs) {
		if v.pre == "" {
			return v, true, nil
		}
	}
	return version{}, false, nil
}

// command runs name with args in dir and returns its standard output; the error carries its
// standard error. GOWORK is dropped from the environment so that go commands use the go.work of
// the tree they run in (make test runs this tool's tests with GOWORK=off); env adds to it.
func command(dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s (in %s): %w: %s", name, strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func environ() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GOWORK=") })
}

// replacement is a replace directive of a go.mod file.
type replacement struct {
	Old, New string // module paths, or a directory for New
}

// workspaceReplacements returns the replace directives of root/dir/go.mod that replace a module
// of the workspace (the development shape: "mcr.dev/core => ../core"), in go.mod's order.
func workspaceReplacements(root, dir string, mods []module) ([]replacement, error) {
	out, err := command(filepath.Join(root, filepath.FromSlash(dir)), nil, "go", "mod", "edit", "-json")
	if err != nil {
		return nil, err
	}
	var gomod struct {
		Replace []struct {
			Old, New struct{ Path, Version string }
		}
	}
	if err := json.Unmarshal(out, &gomod); err != nil {
		return nil, fmt.Errorf("parsing go mod edit -json in %s: %w", dir, err)
	}
	var reps []replacement
	for _, r := range gomod.Replace {
		if !slices.ContainsFunc(mods, func(m module) bool { return m.Path == r.Old.Path }) {
			continue
		}
		if r.Old.Version != "" || r.New.Version != "" {
			return nil, fmt.Errorf("%s/go.mod replaces %s with a version; only directory replacements of workspace modules are supported", dir, r.Old.Path)
		}
		reps = append(reps, replacement{Old: r.Old.Path, New: r.New.Path})
	}
	return reps, nil
}

// dependencyOrder sorts mods so that every module comes after the workspace modules it
// requires (core, then conformance, then the providers, then examples); between modules that
// do not depend on each other go.work's order stays.
func dependencyOrder(root string, mods []module) ([]module, error) {
	deps := map[string][]string{}
	for _, m := range mods {
		reqs, err := requirements(root, m.Dir)
		if err != nil {
			return nil, err
		}
		for _, d := range mods {
			if _, ok := reqs[d.Path]; ok {
				deps[m.Path] = append(deps[m.Path], d.Path)
			}
		}
	}
	var order []module
	placed := map[string]bool{}
	for len(order) < len(mods) {
		progress := false
		for _, m := range mods {
			if placed[m.Path] || slices.ContainsFunc(deps[m.Path], func(d string) bool { return !placed[d] }) {
				continue
			}
			order, placed[m.Path], progress = append(order, m), true, true
		}
		if !progress {
			var left []string
			for _, m := range mods {
				if !placed[m.Path] {
					left = append(left, m.Path)
				}
			}
			return nil, fmt.Errorf("the workspace modules %v require each other in a cycle; they cannot be released one after another", left)
		}
	}
	return order, nil
}
