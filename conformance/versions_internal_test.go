// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// fakeSources returns version sources with the given build information and go list answer;
// it records what go list was asked for.
func fakeSources(bi *debug.BuildInfo, listed map[string]listedModule, listErr error, asked *[]string) versionSources {
	return versionSources{
		buildInfo: func() (*debug.BuildInfo, bool) { return bi, bi != nil },
		goList: func(paths []string) (map[string]listedModule, error) {
			*asked = append(*asked, paths...)
			return listed, listErr
		},
		gitCommit: func(dir string) string {
			if dir == "/src/core" {
				return "0123456789ab"
			}
			return ""
		},
	}
}

func deps(versions map[string]string) []*debug.Module {
	var out []*debug.Module
	for path, v := range versions {
		out = append(out, &debug.Module{Path: path, Version: v})
	}
	return out
}

// TestSuiteInfoModuleMode: a provider module requiring released versions; build information
// has them all and go list is not run.
func TestSuiteInfoModuleMode(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "example.com/provider", Version: "(devel)"},
		Deps: deps(map[string]string{modConformance: "v0.1.0", modCore: "v0.1.0", modMulticlusterRuntime: "v0.24.1",
			modControllerRuntime: "v0.24.1", modClientGo: "v0.36.3"}),
		Settings: []debug.BuildSetting{{Key: "-race", Value: "true"}}}
	var asked []string
	info, provider := fakeSources(bi, map[string]listedModule{"example.com/provider": {Path: "example.com/provider", Main: true, Dir: "/src/core"}}, nil, &asked).versions()
	want := SuiteInfo{Version: "v0.1.0", Module: "v0.1.0", Core: "v0.1.0", MulticlusterRuntime: "v0.24.1", ControllerRuntime: "v0.24.1",
		ClientGo: "v0.36.3", Go: "go1.26.8", Race: true, VersionsFrom: "build info"}
	if info != want {
		t.Errorf("suiteInfo = %+v, want %+v", info, want)
	}
	if len(asked) != 1 || asked[0] != "example.com/provider" {
		t.Errorf("go list was asked for %q, want only the provider's module (the build information has every other version)", asked)
	}
	if want := "example.com/provider (devel), git 0123456789ab"; provider != want {
		t.Errorf("provider module %q, want %q", provider, want)
	}
}

// TestSuiteInfoReplace: mcr.dev modules replaced by directories, as a provider does while
// mcr.dev does not resolve; build information names the replacement.
func TestSuiteInfoReplace(t *testing.T) {
	d := deps(map[string]string{modMulticlusterRuntime: "v0.24.1", modControllerRuntime: "v0.24.1", modClientGo: "v0.36.3"})
	d = append(d, &debug.Module{Path: modConformance, Version: "v0.0.0", Replace: &debug.Module{Path: "../mcr/conformance"}},
		&debug.Module{Path: modCore, Version: "v0.0.0", Replace: &debug.Module{Path: "../mcr/core"}})
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "example.com/provider"}, Deps: d}
	var asked []string
	info := fakeSources(bi, nil, nil, &asked).suiteInfo()
	if info.Core != "v0.0.0 => ../mcr/core" || info.Module != "v0.0.0 => ../mcr/conformance" || info.Version != develVersion {
		t.Errorf("suiteInfo = %+v, want the replacements of core and conformance and the suite version %s", info, develVersion)
	}
	if info.ClientGo != "v0.36.3" {
		t.Errorf("client-go %q, want v0.36.3", info.ClientGo)
	}
}

// TestSuiteInfoWorkspace: in a go.work workspace the test binary's build information lists only
// the main module; the rest comes from go list -m, workspace modules as directory and commit.
func TestSuiteInfoWorkspace(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "example.com/provider", Version: "(devel)"}}
	listed := map[string]listedModule{
		modConformance:         {Path: modConformance, Main: true, Dir: "/src/conformance"},
		"example.com/provider": {Path: "example.com/provider", Main: true, Dir: "/src/provider"},
		modCore:                {Path: modCore, Main: true, Dir: "/src/core"},
		modMulticlusterRuntime: {Path: modMulticlusterRuntime, Version: "v0.24.1"},
		modControllerRuntime:   {Path: modControllerRuntime, Version: "v0.24.1"},
		modClientGo:            {Path: modClientGo, Version: "v0.36.2", Replace: &listedModule{Path: "k8s.io/client-go", Version: "v0.36.3"}},
	}
	var asked []string
	info, provider := fakeSources(bi, listed, nil, &asked).versions()
	want := SuiteInfo{Version: develVersion, Module: "(devel) /src/conformance", Core: "(devel) /src/core, git 0123456789ab",
		MulticlusterRuntime: "v0.24.1", ControllerRuntime: "v0.24.1", ClientGo: "v0.36.2 => k8s.io/client-go v0.36.3",
		Go: "go1.26.8", VersionsFrom: "build info and go list -m"}
	if info != want {
		t.Errorf("suiteInfo = %+v, want %+v", info, want)
	}
	if len(asked) != len(versionedModules)+1 {
		t.Errorf("go list was asked for %q, want all of %q and the provider's module", asked, versionedModules)
	}
	if want := "example.com/provider (devel)"; provider != want {
		t.Errorf("provider module %q, want %q", provider, want)
	}
}

// TestSuiteInfoNoGoCommand: without build information and without go list, the versions are
// "unknown" with the reason, and Verify would reject them; the suite version is always there.
func TestSuiteInfoNoGoCommand(t *testing.T) {
	var asked []string
	info := fakeSources(nil, nil, errors.New(`go list -m: exec: "go": executable file not found in $PATH`), &asked).suiteInfo()
	if info.Version != develVersion {
		t.Errorf("suite version %q, want %q", info.Version, develVersion)
	}
	if !strings.HasPrefix(info.Core, "unknown (") || !strings.Contains(info.Core, "executable file not found") {
		t.Errorf("core %q, want unknown with the reason", info.Core)
	}
}

// TestSuiteInfoStampedCheckout: a binary of the conformance module itself built with VCS
// stamping (go build, not go test) carries its revision; the suite version says (devel) and it.
func TestSuiteInfoStampedCheckout(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: modConformance, Version: develVersion},
		Deps: deps(map[string]string{modCore: "v0.1.0", modMulticlusterRuntime: "v0.24.1",
			modControllerRuntime: "v0.24.1", modClientGo: "v0.36.3"}),
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "fedcba987654"}, {Key: "vcs.modified", Value: "true"}}}
	var asked []string
	info, provider := fakeSources(bi, map[string]listedModule{modConformance: {Path: modConformance, Main: true, Dir: "/src/conformance"}}, nil, &asked).versions()
	if want := "(devel), git fedcba987654 (modified)"; info.Version != want {
		t.Errorf("suite version %q, want %q", info.Version, want)
	}
	if want := modConformance + " (devel), git fedcba987654 (modified)"; provider != want {
		t.Errorf("provider module %q, want %q", provider, want)
	}
}

// TestSuiteInfoThisWorkspace runs the real sources in this repository, a go.work workspace:
// every version must be present, and mcr.dev/core, a workspace module, is its directory.
func TestSuiteInfoThisWorkspace(t *testing.T) {
	if os.Getenv("GOWORK") == "off" {
		t.Skip("GOWORK=off: not a workspace build")
	}
	info := suiteInfo()
	t.Logf("%+v", info)
	for field, v := range map[string]string{"version": info.Version, "module": info.Module, "core": info.Core,
		"multiclusterRuntime": info.MulticlusterRuntime, "controllerRuntime": info.ControllerRuntime, "clientGo": info.ClientGo, "go": info.Go} {
		if v == "" || strings.HasPrefix(v, "unknown") {
			t.Errorf("suite.%s is %q", field, v)
		}
	}
	coreDir, err := filepath.Abs("../core")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.Core, "(devel) "+coreDir) {
		t.Errorf("core %q, want the workspace directory %s", info.Core, coreDir)
	}
	if !strings.HasPrefix(info.Version, "(devel), git ") {
		t.Errorf("suite version %q, want (devel) with this checkout's commit", info.Version)
	}
	if !strings.HasPrefix(testedModule(), modConformance+" (devel), git ") {
		t.Errorf("tested module %q, want %s (devel) with this checkout's commit", testedModule(), modConformance)
	}
	if !strings.HasPrefix(info.ControllerRuntime, "v0.") {
		t.Errorf("controller-runtime %q, want a module version", info.ControllerRuntime)
	}
}
