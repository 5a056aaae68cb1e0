// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package webhook_test

import (
	"net/url"
	"path"
	"strings"
	"testing"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/webhook"
)

func TestEscapeClusterName(t *testing.T) {
	for name, want := range map[multicluster.ClusterName]string{
		"fleet-a":                    "fleet-a",
		"system:admin":               "system:admin",
		"fleet-a.kubeconfig+fleet-a": "fleet-a.kubeconfig+fleet-a",
		"team/east":                  "team~2Feast",
		"..":                         "~2E.",
		"a b%c~":                     "a~20b~25c~7E",
		"zü":                         "z~C3~BC",
	} {
		if got := webhook.EscapeClusterName(name); got != want {
			t.Errorf("EscapeClusterName(%q) = %q, want %q", name, got, want)
		}
	}
	if got := webhook.ClusterPath("/validate", ""); got != "/validate" {
		t.Errorf("the local cluster's path is %q, want the base path", got)
	}
}

// FuzzClusterPath checks that every cluster name has one path, that the path survives what
// happens to it on the way from the webhook configuration to the server (the API server
// unescapes a URL's path and client-go escapes it again; ServeMux cleans it), and that it
// leads back to the name.
func FuzzClusterPath(f *testing.F) {
	for _, seed := range []string{"a", "team/east", "..", ".", "system:admin", "a b", "~7E", "zü", "a+b=c&d"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name := multicluster.ClusterName(s)
		if name == "" {
			return
		}
		p := webhook.ClusterPath("/validate", name)
		u, err := url.Parse("https://127.0.0.1:9443" + p)
		if err != nil {
			t.Fatalf("%q: the path %q is not a valid URL path: %v", name, p, err)
		}
		if u.Path != p || path.Clean(u.Path) != p {
			t.Fatalf("%q: the path %q changes on the way: unescaped %q, cleaned %q", name, p, u.Path, path.Clean(u.Path))
		}
		if (&url.URL{Path: u.Path}).EscapedPath() != p {
			t.Fatalf("%q: the path %q is escaped again as %q", name, p, (&url.URL{Path: u.Path}).EscapedPath())
		}
		segment := strings.TrimPrefix(p, "/validate/")
		if strings.Contains(segment, "/") {
			t.Fatalf("%q: segment %q has a slash", name, segment)
		}
		back, err := webhook.UnescapeClusterName(segment)
		if err != nil || back != name {
			t.Fatalf("%q: segment %q leads back to %q, %v", name, segment, back, err)
		}
	})
}

func TestUnescapeClusterNameRejects(t *testing.T) {
	for _, segment := range []string{"", "~", "~2", "~2f", "~G0", "~61", "~2E~2E", "a/b"} {
		if name, err := webhook.UnescapeClusterName(segment); err == nil {
			t.Errorf("UnescapeClusterName(%q) = %q, want an error", segment, name)
		}
	}
}
