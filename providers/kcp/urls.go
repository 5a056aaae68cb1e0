package kcp

import (
	"errors"
	"net/url"
	"strings"
)

// checkURL refuses a URL the provider would otherwise hand to client-go, whose errors and klog
// lines quote request URLs: user info, a query or a fragment may carry credentials, and kcp puts
// none of them in its URLs (credentials belong in the provider's rest.Config). The error names
// what is wrong, never the URL or any part of it.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse quotes its input.
		return errors.New("it is not a valid URL")
	}
	var parts []string
	if u.User != nil {
		parts = append(parts, "user info")
	}
	if u.RawQuery != "" || u.ForceQuery {
		parts = append(parts, "a query")
	}
	if u.Fragment != "" || u.RawFragment != "" {
		parts = append(parts, "a fragment")
	}
	if len(parts) > 0 {
		return errors.New("it has " + strings.Join(parts, " and ") + ", which may carry credentials; put credentials in the provider's rest.Config")
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return errors.New("it is not an http(s) URL with a host")
	}
	return nil
}
