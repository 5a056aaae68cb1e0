// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
)

// Version is the version of this suite's source. The release process sets it to the tag being
// released, and to the next version with a "-dev" suffix right after. Reports do not carry it:
// their suite.version comes from the build information of the test binary, which also says
// when the suite was built from a checkout rather than a release.
const Version = "v0.1.0-dev"

// Module paths whose versions the report records.
const (
	modConformance         = "mcr.dev/conformance"
	modCore                = "mcr.dev/core"
	modMulticlusterRuntime = "sigs.k8s.io/multicluster-runtime"
	modControllerRuntime   = "sigs.k8s.io/controller-runtime"
	modClientGo            = "k8s.io/client-go"
)

var versionedModules = []string{modConformance, modCore, modMulticlusterRuntime, modControllerRuntime, modClientGo}

// listedModule is the part of `go list -m -json` output the suite reads.
type listedModule struct {
	Path    string
	Version string
	Main    bool
	Dir     string
	Replace *listedModule
}

// versionSources are where module versions are read from; tests replace them.
type versionSources struct {
	buildInfo func() (*debug.BuildInfo, bool)
	// goList returns the modules of paths as `go list -m` sees them in the working directory.
	goList func(paths []string) (map[string]listedModule, error)
	// gitCommit returns the commit of the git checkout holding dir, "" if there is none.
	gitCommit func(dir string) string
}

var defaultVersionSources = versionSources{buildInfo: debug.ReadBuildInfo, goList: goListModules, gitCommit: gitCommit}

var (
	suiteInfoOnce   sync.Once
	suiteInfoCached SuiteInfo
	providerModule  string
)

// suiteInfo returns the versions of the test binary, computed once: they cannot change while
// it runs, and the fallback runs the go command.
func suiteInfo() SuiteInfo {
	suiteInfoOnce.Do(func() { suiteInfoCached, providerModule = defaultVersionSources.versions() })
	info := suiteInfoCached
	info.Tests = len(catalog)
	return info
}

// testedModule returns the module of the binary under test and its version.
func testedModule() string {
	suiteInfo()
	return providerModule
}

// suiteInfo reads versions from the build information and, for the modules it lacks (in a
// go.work workspace it lists only the main module), from `go list -m` in the working
// directory, which is the tested package's directory under go test.
func (src versionSources) suiteInfo() SuiteInfo {
	info, _ := src.versions()
	return info
}

// develVersion is the version the go command gives a module built from a checkout.
const develVersion = "(devel)"

// versions returns the suite's versions and the module of the binary under test (the
// provider's, in a provider's test binary) with its version: "<path> <version>".
func (src versionSources) versions() (SuiteInfo, string) {
	info := SuiteInfo{Go: runtime.Version()}
	versions := map[string]string{}
	// revisions are the VCS revisions of modules built from a checkout, where known.
	revisions := map[string]string{}
	var notes []string
	var mainModule, mainVersion string
	bi, ok := src.buildInfo()
	if ok {
		info.Go = bi.GoVersion
		mainModule, mainVersion = bi.Main.Path, bi.Main.Version
		for _, s := range bi.Settings {
			switch {
			case s.Key == "-race" && s.Value == "true":
				info.Race = true
			case s.Key == "vcs.revision":
				revisions[mainModule] = s.Value
			}
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.modified" && s.Value == "true" && revisions[mainModule] != "" {
				revisions[mainModule] += " (modified)"
			}
		}
		for _, path := range versionedModules {
			if v := moduleVersion(bi, path); v != "" && v != develVersion {
				versions[path] = v
			}
		}
	} else {
		notes = append(notes, "no build information")
	}
	var missing []string
	for _, path := range versionedModules {
		if versions[path] == "" {
			missing = append(missing, path)
		}
	}
	lookUpMain := mainModule != "" && !slices.Contains(versionedModules, mainModule) && released(mainVersion) == "" && revisions[mainModule] == ""
	if len(missing) > 0 || lookUpMain {
		query := missing
		if lookUpMain {
			query = append(slices.Clone(missing), mainModule)
		}
		listed, err := src.goList(query)
		if err != nil {
			notes = append(notes, err.Error())
		}
		for _, path := range missing {
			if m, ok := listed[path]; ok {
				versions[path] = src.describeListed(m)
				if rev := src.listedRevision(m); rev != "" {
					revisions[path] = rev
				}
			}
		}
		if m, ok := listed[mainModule]; ok && lookUpMain {
			revisions[mainModule] = src.listedRevision(m)
		}
		if len(missing) > 0 {
			info.VersionsFrom = "go list -m"
		}
	}
	get := func(path string) string {
		if v := versions[path]; v != "" {
			return v
		}
		if len(notes) > 0 {
			return "unknown (" + strings.Join(notes, "; ") + ")"
		}
		return "unknown"
	}
	info.Module = get(modConformance)
	info.Core = get(modCore)
	info.MulticlusterRuntime = get(modMulticlusterRuntime)
	info.ControllerRuntime = get(modControllerRuntime)
	info.ClientGo = get(modClientGo)
	if info.VersionsFrom == "" {
		info.VersionsFrom = "build info"
	} else {
		info.VersionsFrom = "build info and go list -m"
	}
	// The suite's version is its module's: a release when the binary was built with one,
	// otherwise (a checkout, a workspace, a replacement) "(devel)" and the revision if known.
	info.Version = released(versions[modConformance])
	if mainModule == modConformance {
		info.Version = released(mainVersion)
	}
	if info.Version == "" {
		info.Version = withRevision(develVersion, revisions[modConformance])
	}
	var provider string
	switch {
	case mainModule == "":
		provider = "unknown (no build information)"
	case mainModule == modConformance:
		provider = mainModule + " " + info.Version
	case released(mainVersion) != "":
		provider = mainModule + " " + mainVersion
	default:
		provider = mainModule + " " + withRevision(develVersion, revisions[mainModule])
	}
	return info, provider
}

// released returns v if it is a module version (not "(devel)", not a replacement), else "".
func released(v string) string {
	if strings.HasPrefix(v, "v") && !strings.Contains(v, " ") {
		return v
	}
	return ""
}

func withRevision(v, revision string) string {
	if revision == "" {
		return v
	}
	return v + ", git " + revision
}

// listedRevision is the git commit of a module go list found in a directory, "" otherwise.
func (src versionSources) listedRevision(m listedModule) string {
	switch {
	case m.Replace != nil && m.Replace.Version == "":
		return src.gitCommit(m.Replace.Dir)
	case m.Replace == nil && m.Version == "" && m.Main:
		return src.gitCommit(m.Dir)
	}
	return ""
}

// describeListed renders a module as go list -m sees it: its version (and replacement), or,
// for a workspace or main module without one, its directory and git commit.
func (src versionSources) describeListed(m listedModule) string {
	local := func(dir string) string {
		s := "(devel) " + dir
		if c := src.gitCommit(dir); c != "" {
			s += ", git " + c
		}
		return s
	}
	switch {
	case m.Replace != nil && m.Replace.Version != "":
		return fmt.Sprintf("%s => %s %s", m.Version, m.Replace.Path, m.Replace.Version)
	case m.Replace != nil:
		return fmt.Sprintf("%s => %s", m.Version, local(m.Replace.Dir))
	case m.Version != "":
		return m.Version
	case m.Main:
		return local(m.Dir)
	}
	return ""
}

// moduleVersion returns the version of module path in the build, "(devel)" for the main module
// built from a checkout, and notes a replacement.
func moduleVersion(bi *debug.BuildInfo, path string) string {
	if bi.Main.Path == path {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path != path {
			continue
		}
		if r := d.Replace; r != nil {
			if r.Version != "" {
				return fmt.Sprintf("%s => %s %s", d.Version, r.Path, r.Version)
			}
			return fmt.Sprintf("%s => %s", d.Version, r.Path)
		}
		return d.Version
	}
	return ""
}

// goListModules runs `go list -m -json` in the working directory. go test puts its own go
// command first on the PATH of the test binary, so this is the toolchain that built it.
func goListModules(paths []string) (map[string]listedModule, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("go list -m: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// -e lists modules that are not in the build list with an error instead of failing.
	cmd := exec.CommandContext(ctx, gobin, append([]string{"list", "-m", "-e", "-json"}, paths...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return parseGoList(out)
}

// parseGoList decodes the concatenated JSON objects go list -m -json prints.
func parseGoList(out []byte) (map[string]listedModule, error) {
	mods := map[string]listedModule{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var m listedModule
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return mods, nil
		}
		if err != nil {
			return mods, fmt.Errorf("go list -m: decoding its output: %w", err)
		}
		if m.Version != "" || m.Main || m.Replace != nil {
			mods[m.Path] = m
		}
	}
}

// gitCommit returns the abbreviated HEAD commit of the checkout holding dir, with
// "(modified)" when dir has uncommitted changes; "" when dir is not in a git checkout.
func gitCommit(dir string) string {
	if dir == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return ""
	}
	commit := strings.TrimSpace(string(out))
	status, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no", "--", ".").Output()
	if err == nil && len(bytes.TrimSpace(status)) > 0 {
		commit += " (modified)"
	}
	return commit
}
