// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig

import (
	"errors"
	"fmt"
	"net/url"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// checkServer checks the server URL raw (a kubeconfig's server or a rest.Config's Host) as
// client-go will use it: hasTLS says whether client-go reaches a host:port without a scheme
// over https rather than http (a rest.Config with a CA, a client certificate or Insecure; never
// a kubeconfig, as clientcmd decides before it reads those). Policy violations are appended to errs; the returned error, wrapping
// ErrInvalid, is for a server client-go cannot use. field names the value in messages, which
// never quote it: a URL may carry credentials.
func checkServer(field, raw string, hasTLS bool, policy Policy, errs *[]error) error {
	// client-go's own defaulting, so that what is checked is what will be dialed.
	u, _, err := rest.DefaultServerURL(raw, "", schema.GroupVersion{}, hasTLS)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%w: %s is not an https:// URL with a host", ErrInvalid, field)
	}
	checkURLData(field, u, errs)
	if u.Scheme == "http" && !policy.AllowPlainHTTP {
		what := field + " is an http:// URL"
		if !hasScheme(raw) {
			what = field + " has no https:// scheme, so it is reached over http"
		}
		*errs = append(*errs, &PolicyError{Kind: ErrPlainHTTP, Field: what, Allow: "AllowPlainHTTP"})
	}
	return nil
}

// checkProxyURL checks a kubeconfig's proxy-url as clientcmd parses it. User info is the
// proxy's own credentials and is accepted with the proxy.
func checkProxyURL(field, raw string, policy Policy, errs *[]error) error {
	if !policy.AllowProxyURL {
		*errs = append(*errs, &PolicyError{Kind: ErrProxyURL, Field: field, Allow: "AllowProxyURL"})
		return nil
	}
	// clientcmd quotes a malformed proxy-url in its error, and proxy URLs may carry a password.
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5") {
		return fmt.Errorf("%w: %s is not an http, https or socks5 URL with a host", ErrInvalid, field)
	}
	u.User = nil
	checkURLData(field, u, errs)
	return nil
}

// checkURLData appends an ErrURLData violation for each of the user info, query and fragment
// that u carries.
func checkURLData(field string, u *url.URL, errs *[]error) {
	for _, part := range []struct {
		name string
		has  bool
	}{
		{"user info", u.User != nil},
		{"a query", u.RawQuery != ""},
		{"a fragment", u.Fragment != "" || u.RawFragment != ""},
	} {
		if part.has {
			*errs = append(*errs, &PolicyError{Kind: ErrURLData, Field: field + " has " + part.name})
		}
	}
}

// hasScheme reports whether raw starts with "http://" or "https://", in any case.
func hasScheme(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https")
}

// CheckServerURL checks a server URL as client-go will dial it (a bare host:port is https): an
// error wrapping ErrInvalid for one client-go cannot use, and one wrapping ErrURLData for user
// info, a query or a fragment, which may carry credentials and which client-go's errors and
// klog lines would quote. field names the value in messages, which never quote it. Providers use
// it for URLs they take from configuration or from objects (a base URL, an endpoint) before
// anything dials them or logs them.
func CheckServerURL(field, raw string) error {
	var errs []error
	if err := checkServer(field, raw, true, Policy{AllowPlainHTTP: true}, &errs); err != nil {
		return err
	}
	return errors.Join(errs...)
}
