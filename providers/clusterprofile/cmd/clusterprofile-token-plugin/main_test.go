// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"
)

// TestDescribeServerDropsCredentials: the server the plugin quotes on stderr keeps where the
// member is and drops what may be a credential.
func TestDescribeServerDropsCredentials(t *testing.T) {
	const secret = "MkServerS3cr3t"
	for server, want := range map[string]string{
		"https://east.example:6443":                         "https://east.example:6443",
		"https://admin:" + secret + "@east.example:6443/":   "https://east.example:6443/",
		"https://east.example:6443/?access_token=" + secret: "https://east.example:6443/",
		"https://east.example:6443/k8s#" + secret:           "https://east.example:6443/k8s",
		"https://" + secret + "@east.example:6443":          "https://east.example:6443",
		"not a url " + secret:                               "the server of the request (not a URL)",
	} {
		got := describeServer(server)
		if got != want || strings.Contains(got, secret) {
			t.Errorf("describeServer(%q) = %q, want %q", server, got, want)
		}
	}
}
