// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"fmt"
	"strings"

	"mcr.dev/core/multicluster"
)

// A cluster's path segment must reach the webhook server as it was written in the webhook
// configuration. On the way the API server unescapes a url clientConfig's path and client-go
// escapes it again, and a service reference's path is not unescaped at all, so percent-escapes
// do not survive. The segment therefore holds only characters that every step leaves alone, and
// any other byte as "~" and two upper-case hex digits. A leading "." is escaped too, so that no
// segment is "." or "..", which HTTP clients and muxes would clean away.

// ClusterPath is the path at which a webhook served at base serves the requests of cluster
// name with per-cluster paths: base itself for the local cluster (the empty name), otherwise
// base + "/" + EscapeClusterName(name).
func ClusterPath(base string, name multicluster.ClusterName) string {
	if name == "" {
		return base
	}
	return base + "/" + EscapeClusterName(name)
}

// EscapeClusterName returns the path segment of a cluster: the name with every byte other than
// letters, digits and "-_.:+" (and a leading ".") written as "~XX", XX the byte in upper-case
// hex. "fleet-a" stays "fleet-a", "system:admin" stays "system:admin", "team/east" becomes
// "team~2Feast". The empty name (the local cluster) has no segment; see ClusterPath.
func EscapeClusterName(name multicluster.ClusterName) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if segmentByte(c) && (i > 0 || c != '.') {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "~%02X", c)
	}
	return b.String()
}

// UnescapeClusterName returns the cluster whose path segment is segment, or an error when
// segment is not what EscapeClusterName returns for any cluster, so that each cluster has
// exactly one path.
func UnescapeClusterName(segment string) (multicluster.ClusterName, error) {
	if segment == "" {
		return "", fmt.Errorf("empty cluster segment")
	}
	var b strings.Builder
	for i := 0; i < len(segment); i++ {
		c := segment[i]
		if c != '~' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(segment) {
			return "", fmt.Errorf("cluster segment %q: truncated escape at %d", segment, i)
		}
		hi, okHi := upperHex(segment[i+1])
		lo, okLo := upperHex(segment[i+2])
		if !okHi || !okLo {
			return "", fmt.Errorf("cluster segment %q: invalid escape at %d", segment, i)
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	name := multicluster.ClusterName(b.String())
	if EscapeClusterName(name) != segment {
		return "", fmt.Errorf("cluster segment %q is not escaped canonically (want %q)", segment, EscapeClusterName(name))
	}
	return name, nil
}

// segmentByte reports whether c appears as itself in a cluster's segment.
func segmentByte(c byte) bool {
	return unreserved(c) && c != '~' || c == ':' || c == '+'
}

// unreserved reports whether c is an unreserved URL character (RFC 3986): letters, digits
// and "-._~".
func unreserved(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c == '-' || c == '.' || c == '_' || c == '~'
}

func upperHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
