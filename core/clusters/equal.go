// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"bytes"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// EqualConfigs reports whether a and b reach the same endpoint as the same identity: host and API
// path, TLS settings (inline data and file names), bearer token and token file, basic auth,
// impersonation, exec and auth-provider plugins, the proxy, and a custom transport. Settings that
// do not change who talks to which server (QPS, timeouts, user agent, content type) are ignored.
//
// It exists because reflect.DeepEqual on rest.Config is wrong in both directions: it sees
// different function values as different even when they behave the same, and it cannot compare
// the function fields at all. Proxy functions are compared by the proxy they choose for a request
// to the host.
func EqualConfigs(a, b *rest.Config) bool {
	if a == nil || b == nil {
		return a == b
	}
	return strings.TrimSuffix(a.Host, "/") == strings.TrimSuffix(b.Host, "/") &&
		a.APIPath == b.APIPath &&
		a.Username == b.Username &&
		a.Password == b.Password &&
		a.BearerToken == b.BearerToken &&
		a.BearerTokenFile == b.BearerTokenFile &&
		equalImpersonation(a.Impersonate, b.Impersonate) &&
		equalTLS(a.TLSClientConfig, b.TLSClientConfig) &&
		equalExec(a.ExecProvider, b.ExecProvider) &&
		equalAuthProvider(a.AuthProvider, b.AuthProvider) &&
		equalProxy(a, b) &&
		sameInstance(a.Transport, b.Transport)
}

// sameInstance compares interface values without panicking on non-comparable dynamic types.
func sameInstance(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if reflect.TypeOf(a) != reflect.TypeOf(b) || !reflect.TypeOf(a).Comparable() {
		return false
	}
	return a == b
}

func equalTLS(a, b rest.TLSClientConfig) bool {
	return a.Insecure == b.Insecure &&
		a.ServerName == b.ServerName &&
		a.CertFile == b.CertFile &&
		a.KeyFile == b.KeyFile &&
		a.CAFile == b.CAFile &&
		bytes.Equal(a.CertData, b.CertData) &&
		bytes.Equal(a.KeyData, b.KeyData) &&
		bytes.Equal(a.CAData, b.CAData) &&
		slices.Equal(a.NextProtos, b.NextProtos)
}

func equalImpersonation(a, b rest.ImpersonationConfig) bool {
	return a.UserName == b.UserName &&
		a.UID == b.UID &&
		slices.Equal(a.Groups, b.Groups) &&
		maps.EqualFunc(a.Extra, b.Extra, slices.Equal)
}

func equalExec(a, b *clientcmdapi.ExecConfig) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Command == b.Command &&
		slices.Equal(a.Args, b.Args) &&
		slices.Equal(a.Env, b.Env) &&
		a.APIVersion == b.APIVersion &&
		a.ProvideClusterInfo == b.ProvideClusterInfo &&
		a.InteractiveMode == b.InteractiveMode &&
		reflect.DeepEqual(a.Config, b.Config) // plugin-specific data, plain values only
}

func equalAuthProvider(a, b *clientcmdapi.AuthProviderConfig) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Name == b.Name && maps.Equal(a.Config, b.Config)
}

// equalProxy compares the proxies a and b pick for a request to a's host.
func equalProxy(a, b *rest.Config) bool {
	if a.Proxy == nil || b.Proxy == nil {
		return a.Proxy == nil && b.Proxy == nil
	}
	host := a.Host
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	req, err := http.NewRequest(http.MethodGet, host, nil)
	if err != nil {
		return false
	}
	pa, errA := a.Proxy(req)
	pb, errB := b.Proxy(req)
	if errA != nil || errB != nil {
		return false
	}
	return urlString(pa) == urlString(pb)
}

func urlString(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.String()
}

// CopyConfig returns a copy of cfg that shares nothing the copy's users write to. rest.CopyConfig
// shares the exec plugin configuration between the original and the copy and writes into it
// (ExecProvider.Config), so that two configs copied from one race as soon as one is copied
// again; providers that keep a member's config, to compare it with the next, copy it with this.
func CopyConfig(cfg *rest.Config) *rest.Config {
	if cfg == nil {
		return nil
	}
	src := *cfg
	if ep := cfg.ExecProvider; ep != nil {
		detached := *ep
		detached.Args = slices.Clone(ep.Args)
		detached.Env = slices.Clone(ep.Env)
		if ep.Config != nil {
			detached.Config = ep.Config.DeepCopyObject()
		}
		src.ExecProvider = &detached
	}
	if ap := cfg.AuthProvider; ap != nil {
		detached := *ap
		detached.Config = maps.Clone(ap.Config)
		src.AuthProvider = &detached
	}
	return rest.CopyConfig(&src)
}
