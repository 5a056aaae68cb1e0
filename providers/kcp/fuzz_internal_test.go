// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp

import (
	"net/url"
	"path"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	"mcr.dev/core/multicluster"
)

// The fuzz targets of the provider's parsers of what others write: the endpoint URLs of the
// APIExportEndpointSlice's status (written by kcp), the kcp.io/cluster and kcp.io/path
// annotations of the watched objects (written by whoever may create them), and the URLs built
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

// FuzzClusterHost: the logical cluster named by an object's kcp.io/cluster annotation is either
// rejected as invalid, or its URL on an endpoint is the endpoint's scheme, user and host with a
// clean path that ends in /clusters/<name>: the name never adds a path element, a query, a
// fragment or another host. For an endpoint URL in canonical form with a clean path, it is the
// endpoint URL + /clusters/<name>, under the /clusters/* the endpoint's wildcard cache watches.
func FuzzClusterHost(f *testing.F) {
	f.Add("https://shard-a:6443/services/apiexport/root/mcr", "2x8aq4ov0hf2gp5l")
	f.Add("https://shard-a:6443/services/apiexport/root/mcr/", "root")
	f.Add("https://shard-a/a/../b/./c", "root:org")
	f.Add("http://h", "../etc")
	f.Add("http://h/%2e%2e/x?q=1#f", "a/b")
	f.Add("https://user:secret@h/x", "*")
	f.Add("%zz", "east")
	f.Fuzz(func(t *testing.T, endpointURL, annotation string) {
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{logicalcluster.AnnotationKey: annotation}}}
		name := logicalcluster.From(obj)
		if !name.IsValid() {
			return
		}
		if name.String() != annotation {
			t.Fatalf("annotation %q gives the name %q", annotation, name)
		}
		if n, ok := name.Path().Name(); !ok || n != name {
			t.Fatalf("the path of %q gives the name %q, %v", name, n, ok)
		}
		if strings.ContainsAny(name.String(), "/?#%@:.\\ ") {
			t.Fatalf("valid logical cluster name %q has a URL metacharacter", name)
		}

		ep, err := url.Parse(endpointURL)
		host, herr := clusterHost(endpointURL, name)
		if err != nil {
			if herr == nil {
				t.Fatalf("clusterHost(%q, %q) = %q for an unparsable endpoint URL", endpointURL, name, host)
			}
			return
		}
		if herr != nil {
			t.Fatalf("clusterHost(%q, %q): %v", endpointURL, name, herr)
		}
		if ep.Scheme == "" || ep.Host == "" || ep.Opaque != "" {
			return // not a URL the rest client would accept as a host
		}
		u, err := url.Parse(host)
		if err != nil {
			t.Fatalf("clusterHost(%q, %q) = %q, which does not parse: %v", endpointURL, name, host, err)
		}
		if u.Scheme != ep.Scheme || u.Host != ep.Host || u.User.String() != ep.User.String() || u.Opaque != ep.Opaque ||
			u.RawQuery != ep.RawQuery || u.Fragment != ep.Fragment {
			t.Fatalf("clusterHost(%q, %q) = %q: not on the endpoint", endpointURL, name, host)
		}
		p := u.EscapedPath()
		if !strings.HasSuffix(p, "/clusters/"+name.String()) || path.Clean(p) != p {
			t.Fatalf("clusterHost(%q, %q) = %q: path %q", endpointURL, name, host, p)
		}
		if want := path.Join("/", ep.EscapedPath(), "clusters", name.String()); p != want {
			t.Fatalf("clusterHost(%q, %q) = %q: path %q, want %q", endpointURL, name, host, p, want)
		}
		trimmed := strings.TrimRight(endpointURL, "/")
		tu, err := url.Parse(trimmed)
		if err == nil && tu.String() == trimmed && tu.RawQuery == "" && !tu.ForceQuery && tu.Fragment == "" && tu.Opaque == "" &&
			(tu.EscapedPath() == "" || path.Clean(tu.EscapedPath()) == tu.EscapedPath()) {
			if want := trimmed + name.Path().RequestPath(); host != want {
				t.Fatalf("clusterHost(%q, %q) = %q, want %q", endpointURL, name, host, want)
			}
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

// FuzzWildcardCacheErrors: whatever endpoint URL the slice lists, building the endpoint's
// wildcard cache never panics and its errors never quote the provider's credentials.
func FuzzWildcardCacheErrors(f *testing.F) {
	const token = "fuzz-bearer-token-do-not-print"
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		f.Fatal(err)
	}
	f.Add("https://shard-a:6443/services/apiexport/root/mcr")
	f.Add("%zz")
	f.Add("http://[::1")
	f.Add("ftp://h/")
	f.Add("")
	f.Fuzz(func(t *testing.T, endpointURL string) {
		cfg := &rest.Config{Host: endpointURL, BearerToken: token}
		wc, err := newWildcardCache(cfg, scheme, nil)
		if err != nil {
			if strings.Contains(err.Error(), token) {
				t.Fatalf("newWildcardCache(%q): the error quotes the token: %v", endpointURL, err)
			}
			return
		}
		wc.httpClient.CloseIdleConnections()
	})
}
