// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package restmapper

import (
	"context"
	"net"
	"net/http"
	"testing"

	"k8s.io/client-go/rest"
)

func TestEndpointKey(t *testing.T) {
	base := func() *rest.Config {
		return &rest.Config{Host: "https://api.example.com:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca-1")}}
	}
	same := map[string]func(*rest.Config){
		"other token":         func(c *rest.Config) { c.BearerToken = "b" },
		"client certificate":  func(c *rest.Config) { c.CertData, c.KeyData = []byte("c"), []byte("k") },
		"upper-case host":     func(c *rest.Config) { c.Host = "https://API.example.com:6443" },
		"trailing slash":      func(c *rest.Config) { c.Host += "/" },
		"other QPS and Burst": func(c *rest.Config) { c.QPS, c.Burst = 1, 2 },
	}
	different := map[string]func(*rest.Config){
		"other port":        func(c *rest.Config) { c.Host = "https://api.example.com:6444" },
		"other path":        func(c *rest.Config) { c.Host += "/clusters/root:org" },
		"other CA":          func(c *rest.Config) { c.CAData = []byte("ca-2") },
		"CA file":           func(c *rest.Config) { c.CAFile = "/ca.crt" },
		"other server name": func(c *rest.Config) { c.ServerName = "kube.internal" },
		"plain http":        func(c *rest.Config) { c.Host = "http://api.example.com:6443" },
		"other API path":    func(c *rest.Config) { c.APIPath = "/apis" },
	}
	never := map[string]func(*rest.Config){
		"insecure": func(c *rest.Config) { c.Insecure = true },
		"proxy":    func(c *rest.Config) { c.Proxy = http.ProxyFromEnvironment },
		"dial": func(c *rest.Config) {
			c.Dial = func(context.Context, string, string) (net.Conn, error) { return nil, nil }
		},
		"transport":      func(c *rest.Config) { c.Transport = http.DefaultTransport },
		"wrap transport": func(c *rest.Config) { c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return rt } },
		"no host":        func(c *rest.Config) { c.Host = "" },
		"user info":      func(c *rest.Config) { c.Host = "https://u:p@api.example.com:6443" },
		"query":          func(c *rest.Config) { c.Host += "?x=1" },
	}
	want, ok := endpointKey(base())
	if !ok {
		t.Fatal("the base config cannot share")
	}
	if k, _ := endpointKey(&rest.Config{Host: "api.example.com:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca-1")}}); k != want {
		t.Error("a host without a scheme is not read as https")
	}
	for name, change := range same {
		c := base()
		change(c)
		if got, ok := endpointKey(c); !ok || got != want {
			t.Errorf("%s: key %q (shareable %v), want the base config's", name, got, ok)
		}
	}
	for name, change := range different {
		c := base()
		change(c)
		if got, ok := endpointKey(c); !ok || got == want {
			t.Errorf("%s: key %q (shareable %v), want a different shareable key", name, got, ok)
		}
	}
	for name, change := range never {
		c := base()
		change(c)
		if _, ok := endpointKey(c); ok {
			t.Errorf("%s: shareable", name)
		}
	}
}
