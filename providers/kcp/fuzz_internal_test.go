// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp

import (
	"slices"
	"strings"
	"testing"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	"mcr.dev/core/multicluster"
)

// The fuzz targets of the provider's parsers of what others write: the endpoint URLs of the
// APIExportEndpointSlice's status (written by kcp) and the kcp.io/path annotations of the
// watched objects (written by whoever may create them); internal/cache fuzzes the URLs built
// from both. Seeds are in testdata/fuzz/<FuzzName>; `go test -run=^$ -fuzz=^FuzzX$ .` runs one.

// FuzzEndpointURLs: EndpointURLs never panics, and returns each URL of the slice without
// trailing slashes, once, in the order of first appearance, none empty; applied to its own
// result it changes nothing.
func FuzzEndpointURLs(f *testing.F) {
	f.Add("https://shard-a/services/apiexport/root/mcr", "https://shard-b/services/apiexport/root/mcr/", "https://shard-a/services/apiexport/root/mcr")
	f.Add("", "/", "https://x//")
	f.Add("https://u:p@h:6443/a?b=c#d", "http://[::1]:1/", "%zz")
	slice := func(urls ...string) *apisv1alpha1.APIExportEndpointSlice {
		s := &apisv1alpha1.APIExportEndpointSlice{}
		for _, u := range urls {
			s.Status.APIExportEndpoints = append(s.Status.APIExportEndpoints, apisv1alpha1.APIExportEndpoint{URL: u})
		}
		return s
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		in := []string{a, b, c}
		got := EndpointURLs(slice(in...))
		var want []string
		for _, u := range in {
			u = strings.TrimRight(u, "/")
			if u != "" && !slices.Contains(want, u) {
				want = append(want, u)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("EndpointURLs(%q) = %q, want %q", in, got, want)
		}
		for _, u := range got {
			if u == "" || strings.HasSuffix(u, "/") {
				t.Fatalf("EndpointURLs(%q) has %q", in, u)
			}
		}
		if again := EndpointURLs(slice(got...)); !slices.Equal(again, got) {
			t.Fatalf("EndpointURLs is not idempotent: %q, then %q", got, again)
		}
	})
}

// FuzzPathStore: whatever kcp.io/path annotations the logical clusters carry and in whatever
// order they change and go, a workspace path resolves to a logical cluster only if that is the
// path the cluster carries now, and the path a cluster was last given resolves to it; a path
// that is a logical cluster name resolves to itself when no cluster carries it. Annotation
// values round-trip through logicalcluster.NewPath.
func FuzzPathStore(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8}, "root:org:team", "root:org")
	f.Add([]byte{0, 9, 1, 10, 2, 20, 3}, "root", "east")
	f.Add([]byte{0, 3, 6, 0, 1, 4, 7}, "", ":")
	f.Add([]byte{0, 1, 0, 1, 2}, "root:org", "root:org")
	f.Fuzz(func(t *testing.T, ops []byte, p1, p2 string) {
		for _, v := range []string{p1, p2} {
			if got := logicalcluster.NewPath(v).String(); got != v {
				t.Fatalf("NewPath(%q).String() = %q", v, got)
			}
		}
		names := []logicalcluster.Name{"east", "west", "root"}
		paths := []logicalcluster.Path{logicalcluster.NewPath(p1), logicalcluster.NewPath(p2), logicalcluster.NewPath("root:org")}
		p := &Provider{}
		current := map[logicalcluster.Name]string{} // the path each cluster carries now
		if len(ops) > 64 {
			ops = ops[:64]
		}
		for _, op := range ops {
			name, path := names[int(op/2)%len(names)], paths[int(op/6)%len(paths)]
			if op%2 == 0 {
				p.paths.set(name, path)
				current[name] = path.String()
				if got, ok := p.paths.lookup(path); !ok || got != name {
					t.Fatalf("after set(%q, %q), lookup = %q, %v", name, path, got, ok)
				}
			} else {
				p.paths.forget(name)
				delete(current, name)
			}
			for _, q := range append(slices.Clone(paths), logicalcluster.NewPath(string(name))) {
				got, ok := p.paths.lookup(q)
				if ok && current[got] != q.String() {
					t.Fatalf("lookup(%q) = %q, which carries %q", q, got, current[got])
				}
				cn, cok := p.ClusterNameForPath(q)
				switch n, isName := q.Name(); {
				case ok:
					if !cok || cn != multicluster.ClusterName(got) {
						t.Fatalf("ClusterNameForPath(%q) = %q, %v; want %q", q, cn, cok, got)
					}
				case isName:
					if !cok || cn != multicluster.ClusterName(n) {
						t.Fatalf("ClusterNameForPath(%q) = %q, %v; want %q", q, cn, cok, n)
					}
				case cok:
					t.Fatalf("ClusterNameForPath(%q) = %q for a path no cluster carries", q, cn)
				}
			}
		}
	})
}
