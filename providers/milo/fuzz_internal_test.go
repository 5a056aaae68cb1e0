// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo

import (
	"net"
	"net/url"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
)

// The fuzz targets of the provider's builders of addresses from what others write: a project's
// name (the name of its Project or ProjectControlPlane, chosen by whoever creates it) becomes a
// path on the Milo apiserver or a host name on the infrastructure cluster, and BaseConfig's host
// the URL of every control plane. Seeds are in testdata/fuzz/<FuzzName>;
// `go test -run=^$ -fuzz=^FuzzX$ .` runs one.

// controlPlanePrefix is ControlPlanePath before the project.
const controlPlanePrefix = "/apis/resourcemanager.miloapis.com/v1alpha1/projects/"

// FuzzControlPlaneURL: whatever the project's name, ControlPlaneURL is base's scheme, user and
// host with the path ControlPlanePath, exactly one escaped path element of which is the project:
// the name never adds a path element, a query, a fragment or another host, and it reads back
// from the URL. ClusterName and ProjectName round-trip.
func FuzzControlPlaneURL(f *testing.F) {
	f.Add("https://milo.example.com:6443", "acme")
	f.Add("https://milo.example.com/some/base/path?q=1#frag", "my-project.v2")
	f.Add("http://127.0.0.1:8080/", "a/b")
	f.Add("https://[::1]:443", "..")
	f.Add("https://u:p@h", "%2e%2e")
	f.Add("https://h", "x?y#z")
	f.Add("https://h", "a%2Fb")
	f.Add("//0", "0")
	f.Fuzz(func(t *testing.T, baseURL, project string) {
		if got := ProjectName(ClusterName(project)); got != project {
			t.Fatalf("ProjectName(ClusterName(%q)) = %q", project, got)
		}
		p := ControlPlanePath(project)
		if !strings.HasPrefix(p, controlPlanePrefix) || !strings.HasSuffix(p, "/control-plane") {
			t.Fatalf("ControlPlanePath(%q) = %q", project, p)
		}
		seg := strings.TrimSuffix(strings.TrimPrefix(p, controlPlanePrefix), "/control-plane")
		if strings.ContainsAny(seg, "/?#") {
			t.Fatalf("ControlPlanePath(%q) = %q: the project is more than one path element", project, p)
		}
		if back, err := url.PathUnescape(seg); err != nil || back != project {
			t.Fatalf("ControlPlanePath(%q) = %q, whose project element reads back as %q, %v", project, p, back, err)
		}

		base, err := url.Parse(baseURL)
		if err != nil || base.Scheme == "" || base.Host == "" || base.Opaque != "" {
			return
		}
		got := ControlPlaneURL(base, project)
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("ControlPlaneURL(%q, %q) = %q, which does not parse: %v", baseURL, project, got, err)
		}
		if u.Scheme != base.Scheme || u.Host != base.Host || u.User.String() != base.User.String() {
			t.Fatalf("ControlPlaneURL(%q, %q) = %q: not on the Milo apiserver", baseURL, project, got)
		}
		if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
			t.Fatalf("ControlPlaneURL(%q, %q) = %q: has a query or fragment", baseURL, project, got)
		}
		if u.EscapedPath() != p {
			t.Fatalf("ControlPlaneURL(%q, %q) = %q: path %q, want %q", baseURL, project, got, u.EscapedPath(), p)
		}
		if u.Path != controlPlanePrefix+project+"/control-plane" {
			t.Fatalf("ControlPlaneURL(%q, %q) = %q: decoded path %q", baseURL, project, got, u.Path)
		}
		// The rest client joins APIPath to the host's path: the project stays one element.
		cfg := &rest.Config{Host: got}
		if su, _, err := rest.DefaultServerUrlFor(cfg); err != nil || su.EscapedPath() != p {
			t.Fatalf("the rest client reads ControlPlaneURL(%q, %q) = %q as %v, %v", baseURL, project, got, su, err)
		}
	})
}

// FuzzServiceHost: for every name the apiserver accepts for a ProjectControlPlane (a DNS
// subdomain), ServiceHost is an https URL on port 6443 with no user, path, query or fragment,
// whose host is a name under .svc.cluster.local that starts with milo-apiserver.project-<name>;
// when project-<name> is a namespace name (a DNS label), the host is exactly the Service
// milo-apiserver in that namespace.
func FuzzServiceHost(f *testing.F) {
	f.Add("acme")
	f.Add("a.b")
	f.Add("x.svc.evil.example")
	f.Add("a/b@c:1")
	f.Add(strings.Repeat("a", 60))
	f.Fuzz(func(t *testing.T, project string) {
		if len(validation.IsDNS1123Subdomain(project)) > 0 {
			return
		}
		got := ServiceHost(project)
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("ServiceHost(%q) = %q, which does not parse: %v", project, got, err)
		}
		if u.Scheme != "https" || u.User != nil || u.Port() != "6443" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
			t.Fatalf("ServiceHost(%q) = %q: not an https host on port 6443", project, got)
		}
		h := u.Hostname()
		if h != "milo-apiserver.project-"+project+".svc.cluster.local" || net.ParseIP(h) != nil {
			t.Fatalf("ServiceHost(%q) = %q: host %q", project, got, h)
		}
		if ns := "project-" + project; len(validation.IsDNS1123Label(ns)) == 0 {
			if labels := strings.Split(h, "."); len(labels) != 5 || labels[0] != "milo-apiserver" || labels[1] != ns {
				t.Fatalf("ServiceHost(%q) = %q: not the Service milo-apiserver in namespace %s", project, got, ns)
			}
		}
	})
}

// FuzzControlPlaneHostDefaults: whatever BaseConfig's host, the defaults never panic and their
// errors never quote BaseConfig's credentials; when they apply, the default ControlPlaneHost of
// ModeProject is ControlPlaneURL of BaseConfig's URL, on BaseConfig's host.
func FuzzControlPlaneHostDefaults(f *testing.F) {
	const token, password = "fuzz-bearer-token-do-not-print", "fuzz-password-do-not-print"
	f.Add("https://milo.example.com:6443", "acme", false)
	f.Add("milo.example.com", "acme", true)
	f.Add("https://milo.example.com/prefix/", "a/b", false)
	f.Add("%zz", "acme", true)
	f.Add("http://[::1", "acme", false)
	f.Add("https://h?x=1#y", "..", true)
	f.Fuzz(func(t *testing.T, host, project string, basic bool) {
		cfg := &rest.Config{Host: host, BearerToken: token}
		if basic {
			cfg = &rest.Config{Host: host, Username: "milo", Password: password}
		}
		o, err := Options{BaseConfig: cfg}.withDefaults(nil)
		if err != nil {
			if strings.Contains(err.Error(), token) || strings.Contains(err.Error(), password) {
				t.Fatalf("withDefaults with host %q: the error quotes the credentials: %v", host, err)
			}
			return
		}
		base, _, err := rest.DefaultServerUrlFor(cfg)
		if err != nil {
			t.Fatalf("withDefaults accepted host %q, which rest cannot read: %v", host, err)
		}
		got := o.ControlPlaneHost(project)
		if want := ControlPlaneURL(base, project); got != want {
			t.Fatalf("ControlPlaneHost(%q) with host %q = %q, want %q", project, host, got, want)
		}
		if strings.Contains(got, token) || strings.Contains(got, password) {
			t.Fatalf("ControlPlaneHost(%q) with host %q = %q quotes the credentials", project, host, got)
		}
		if u, err := url.Parse(got); err != nil || u.Host != base.Host {
			t.Fatalf("ControlPlaneHost(%q) with host %q = %q: not on %q (%v)", project, host, got, base.Host, err)
		}
	})
}
