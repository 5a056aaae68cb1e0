// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package cache

import (
	"net/url"
	"path"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kcp-dev/logicalcluster/v3"
)

// The fuzz targets of what the shared caches build from what others write: the URL of a logical
// cluster from an endpoint URL of the APIExportEndpointSlice's status (written by kcp) and the
// kcp.io/cluster annotation of a watched object (written by whoever may create it), and the
// wildcard cache of an endpoint URL. Seeds are in testdata/fuzz/<FuzzName>;
// `go test -run=^$ -fuzz=^FuzzX$ .` runs one.

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
		wc, err := NewWildcard(cfg, scheme, nil)
		if err != nil {
			if strings.Contains(err.Error(), token) {
				t.Fatalf("NewWildcard(%q): the error quotes the token: %v", endpointURL, err)
			}
			return
		}
		wc.httpClient.CloseIdleConnections()
	})
}
