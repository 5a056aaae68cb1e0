// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
)

func TestClusterNameIsCollisionFree(t *testing.T) {
	base := "/etc/fleet"
	files := []string{
		"/etc/fleet/a", "/etc/fleet/a+b", "/etc/fleet/a%2Bb", "/etc/fleet/a%b", "/etc/fleet/a+",
		"/etc/fleet/sub/a", "/etc/fleet/sub+a", "/etc/other/a", "/etc/fleet/+", "/etc/fleet/%",
	}
	contexts := []string{"", "b", "+b", "b+", "a+b", "%2Bb", "sub/a", "+"}
	for _, sep := range []string{"+", ":", "é"} {
		seen := map[multicluster.ClusterName][2]string{}
		for _, f := range files {
			for _, c := range contexts {
				name := clusterName(base, sep, f, c)
				if prev, dup := seen[name]; dup {
					t.Errorf("separator %q: %s/%q and %s/%q are both named %q", sep, prev[0], prev[1], f, c, name)
				}
				seen[name] = [2]string{f, c}
			}
		}
	}
}

func TestClusterNameExamples(t *testing.T) {
	for _, tc := range []struct {
		base, sep, file, context string
		want                     multicluster.ClusterName
	}{
		{"/etc/fleet", "+", "/etc/fleet/east.kubeconfig", "east", "east.kubeconfig+east"},
		{"/etc/fleet", "+", "/etc/fleet/a+b.kubeconfig", "c+d", "a%2Bb.kubeconfig+c+d"},
		{"/etc/fleet", "+", "/etc/fleet/100%.kubeconfig", "x", "100%25.kubeconfig+x"},
		{"/etc", "+", "/etc/fleet/prod/kubeconfig", "admin@prod", "fleet/prod/kubeconfig+admin@prod"},
		{"/etc/fleet", "+", "/etc/other/kubeconfig", "x", "../other/kubeconfig+x"},
		{"/etc/fleet", ":", "/etc/fleet/a:b", "c", "a%3Ab:c"},
		// File names are bytes: invalid UTF-8 is encoded, not replaced, so names stay apart.
		{"/etc/fleet", "+", "/etc/fleet/\xff.kubeconfig", "x", "%FF.kubeconfig+x"},
		{"/etc/fleet", "+", "/etc/fleet/\xfe.kubeconfig", "x", "%FE.kubeconfig+x"},
	} {
		if got := clusterName(tc.base, tc.sep, tc.file, tc.context); got != tc.want {
			t.Errorf("clusterName(%q, %q, %q, %q) = %q, want %q", tc.base, tc.sep, tc.file, tc.context, got, tc.want)
		}
	}
}

func TestNameBase(t *testing.T) {
	for _, tc := range []struct {
		roots []string
		want  string
	}{
		{[]string{"/etc/fleet"}, "/etc/fleet"},
		{[]string{"/etc/fleet/prod", "/etc/fleet/staging"}, "/etc/fleet"},
		{[]string{"/etc/fleet", "/etc/fleet/prod"}, "/etc/fleet"},
		{[]string{"/etc/fleetx", "/etc/fleet"}, "/etc"},
		{[]string{"/a/x", "/b/y"}, "/"},
		{nil, "/"},
	} {
		if got := nameBase(tc.roots); got != tc.want {
			t.Errorf("nameBase(%q) = %q, want %q", tc.roots, got, tc.want)
		}
	}
}

func TestOptionsDefaults(t *testing.T) {
	t.Setenv("KUBECONFIG", "/a/one::/b/two")
	o, err := Options{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/a/one", "/b/two"}; !slices.Equal(o.Files, want) {
		t.Errorf("Files from $KUBECONFIG = %q, want %q", o.Files, want)
	}
	if o.Separator != DefaultSeparator || o.Debounce != DefaultDebounce || o.ResyncPeriod != DefaultResyncPeriod ||
		!slices.Equal(o.DirPatterns, DefaultDirPatterns) || o.Policy != (kubeconfig.Policy{}) ||
		o.DiscoveredPolicy != (kubeconfig.Policy{}) || o.MaxFileSize != DefaultMaxFileSize {
		t.Errorf("defaults not applied: %+v", o)
	}

	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", "/home/someone")
	o, err = Options{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	// clientcmd computes the home file once, at init; it ends in .kube/config either way.
	if len(o.Files) != 1 || filepath.Base(o.Files[0]) != "config" || filepath.Base(filepath.Dir(o.Files[0])) != ".kube" {
		t.Errorf("Files without $KUBECONFIG = %q, want $HOME/.kube/config", o.Files)
	}

	o, err = Options{Dirs: []string{"relative"}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if len(o.Files) != 0 || !slices.Equal(o.Dirs, []string{filepath.Join(wd, "relative")}) {
		t.Errorf("explicit Dirs: Files %q, Dirs %q", o.Files, o.Dirs)
	}
}

func TestInvalidOptions(t *testing.T) {
	for name, opts := range map[string]Options{
		"two-character separator": {Dirs: []string{"/x"}, Separator: "++"},
		"percent separator":       {Dirs: []string{"/x"}, Separator: "%"},
		"slash separator":         {Dirs: []string{"/x"}, Separator: "/"},
		"hex digit separator":     {Dirs: []string{"/x"}, Separator: "2"},
		"hex letter separator":    {Dirs: []string{"/x"}, Separator: "B"},
		"glob with a bad element": {Globs: []string{`/x/a\/*`}},
		"glob with a bad class":   {Globs: []string{"/x/*["}},
		"bad trailing escape":     {Dirs: []string{"/x"}, DirPatterns: []string{`a*\`}},
		"bad glob":                {Globs: []string{"/x/[*"}},
		"bad dir pattern":         {Dirs: []string{"/x"}, DirPatterns: []string{"[*"}},
	} {
		if _, err := New(opts); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}

func TestParsePaths(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "config") + string(os.PathListSeparator) + dir + string(os.PathListSeparator) +
		filepath.Join(dir, "*.kubeconfig") + string(os.PathListSeparator) + "/not/there/" + string(os.PathListSeparator)
	files, dirs, globs := ParsePaths(list, "/another/file")
	if want := []string{filepath.Join(dir, "config"), "/another/file"}; !slices.Equal(files, want) {
		t.Errorf("files = %q, want %q", files, want)
	}
	if want := []string{dir, "/not/there/"}; !slices.Equal(dirs, want) {
		t.Errorf("dirs = %q, want %q", dirs, want)
	}
	if want := []string{filepath.Join(dir, "*.kubeconfig")}; !slices.Equal(globs, want) {
		t.Errorf("globs = %q, want %q", globs, want)
	}
}

// A glob without a wildcard matches one path (it made New panic before).
func TestGlobWithoutWildcard(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, pattern := range []string{path, "/"} {
		if _, err := New(Options{Globs: []string{pattern}}); err != nil {
			t.Errorf("New(Globs: %q): %v", pattern, err)
		}
	}
	g, err := newGlob(path)
	if err != nil {
		t.Fatal(err)
	}
	if matches, _, _ := g.match(); !slices.Equal(matches, []string{path}) {
		t.Errorf("glob %q matches %q", path, matches)
	}
}
