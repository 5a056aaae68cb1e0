// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file_test

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/providers/file"
)

// Options spelled as for multicluster-runtime's file provider take effect: KubeconfigFiles and
// KubeconfigDirs add files and directories, KubeconfigGlobs replace the patterns that select a
// directory's files (a pattern with a path separator matching below the directory), and the
// top-level ClusterOptions reach every member after the shared Options.ClusterOptions. ClusterNames
// and Get work as sync-local-to-remote uses them, and Get("") is the first cluster.
func TestUpstreamFieldNames(t *testing.T) {
	root := t.TempDir()
	named := filepath.Join(root, "files", "config")
	dir := filepath.Join(root, "fleet")
	writeAtomic(t, named, merged(t, memberConfig(t, "west", "named")))
	writeAtomic(t, filepath.Join(dir, "east.yaml"), merged(t, memberConfig(t, "east", "east")))
	writeAtomic(t, filepath.Join(dir, "sub", "kubeconfig"), merged(t, memberConfig(t, "west", "sub")))
	// A default pattern, replaced by KubeconfigGlobs: not read.
	writeAtomic(t, filepath.Join(dir, "skipped.kubeconfig"), merged(t, memberConfig(t, "east", "skipped")))

	// Every option records its call by the cluster.Options it changes, one for each cluster.New:
	// each sees the shared option, then the top-level one.
	var mu sync.Mutex
	calls := map[*cluster.Options][]string{}
	record := func(what string) cluster.Option {
		return func(o *cluster.Options) {
			mu.Lock()
			defer mu.Unlock()
			calls[o] = append(calls[o], what)
		}
	}
	opts := file.Options{
		KubeconfigFiles: []string{named, ""},
		KubeconfigDirs:  []string{dir},
		KubeconfigGlobs: []string{"*.yaml", filepath.Join("*", "kubeconfig"), ""},
		ClusterOptions:  []cluster.Option{record("upstream")}, //nolint:staticcheck // the deprecated upstream field is what this tests
		Options:         kit.Options{ClusterOptions: []cluster.Option{record("shared")}},
	}
	s := start(t, opts)
	name := func(path, context string) multicluster.ClusterName {
		n, err := s.provider.ClusterName(path, context)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	namedName := name(named, "named")
	eastName := name(filepath.Join(dir, "east.yaml"), "east")
	subName := name(filepath.Join(dir, "sub", "kubeconfig"), "sub")
	s.waitEngaged(t, namedName, eastName, subName)
	s.requireReaches(t, namedName, "west")
	s.requireReaches(t, eastName, "east")
	s.requireReaches(t, subName, "west")

	// sync-local-to-remote's use: every name of ClusterNames is served by Get.
	names := s.provider.ClusterNames()
	if want := []multicluster.ClusterName{namedName, eastName, subName}; !slices.Equal(names, slices.Sorted(slices.Values(want))) {
		t.Errorf("ClusterNames = %v, want %v", names, want)
	}
	for _, n := range names {
		if _, err := s.provider.Get(context.Background(), n); err != nil {
			t.Fatalf("Get(%q): %v", n, err)
		}
	}
	mu.Lock()
	if len(calls) < len(names) {
		t.Errorf("cluster options applied to %d clusters, want at least %d", len(calls), len(names))
	}
	for _, got := range calls {
		if strings.Join(got, " ") != "shared upstream" {
			t.Errorf("cluster options applied: %q, want Options.ClusterOptions, then ClusterOptions", got)
		}
	}
	mu.Unlock()
	first, err := s.provider.Get(context.Background(), "")
	if err != nil {
		t.Fatalf(`Get(""): %v`, err)
	}
	if want, _ := s.provider.Get(context.Background(), names[0]); first != want {
		t.Errorf(`Get("") is not the cluster of %q, the first of ClusterNames`, names[0])
	}
}

// Get("") finds nothing while no cluster is engaged.
func TestGetEmptyNameWithoutClusters(t *testing.T) {
	p, err := file.New(file.Options{KubeconfigFiles: []string{filepath.Join(t.TempDir(), "missing")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get(context.Background(), ""); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Errorf(`Get("") = %v, want ErrClusterNotFound`, err)
	}
}

// The aliases are merged with the fields of mcr's spelling, and upstream's example passing an
// empty -globs flag (KubeconfigGlobs: []string{""}) keeps the default patterns.
func TestUpstreamFieldNamesMerge(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a", "config"), filepath.Join(root, "b", "config")
	dir := filepath.Join(root, "dir")
	writeAtomic(t, a, merged(t, memberConfig(t, "east", "a")))
	writeAtomic(t, b, merged(t, memberConfig(t, "west", "b")))
	writeAtomic(t, filepath.Join(dir, "c.kubeconfig"), merged(t, memberConfig(t, "east", "c")))

	p, err := file.New(file.Options{
		Files:           []string{a},
		KubeconfigFiles: []string{b},
		KubeconfigDirs:  []string{dir},
		KubeconfigGlobs: []string{""},
	})
	if err != nil {
		t.Fatal(err)
	}
	configs, err := p.ReadConfigs()
	if err != nil {
		t.Fatal(err)
	}
	var want []multicluster.ClusterName
	for path, context := range map[string]string{a: "a", b: "b", filepath.Join(dir, "c.kubeconfig"): "c"} {
		n, err := p.ClusterName(path, context)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, n)
	}
	slices.Sort(want)
	if got := slices.Sorted(maps.Keys(configs)); !slices.Equal(got, want) {
		t.Errorf("clusters read: %v, want %v", got, want)
	}
}
