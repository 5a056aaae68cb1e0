// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package frontproxy

import (
	"strings"
)

// apiRequest is what the front-proxy needs to know about a request below /clusters/<name>: a
// small version of the apiserver's RequestInfo.
type apiRequest struct {
	// path is the request path below /clusters/<name>, e.g. /api/v1/namespaces/a/configmaps.
	path string
	// isResource tells a resource request from discovery, /version, /openapi and the like.
	isResource  bool
	group       string
	version     string
	namespace   string
	resource    string
	name        string
	subresource string
}

// isCollection reports whether the request addresses a collection (list, watch, create).
func (r apiRequest) isCollection() bool { return r.isResource && r.name == "" }

// groupResource names the resource for counters: "configmaps" or "apibindings.apis.kcp.io".
func (r apiRequest) groupResource() string {
	if r.group == "" {
		return r.resource
	}
	return r.resource + "." + r.group
}

// parseAPIPath parses the path of an API request.
func parseAPIPath(p string) apiRequest {
	req := apiRequest{path: p}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	var rest []string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		req.version, rest = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		req.group, req.version, rest = parts[1], parts[2], parts[3:]
	default:
		return req // discovery and other non-resource paths
	}
	if rest[0] == "" {
		return req
	}
	// /namespaces/<ns>/<resource>..., except the subresources of a namespace itself.
	namespaceSubresource := req.group == "" && len(rest) == 3 && (rest[2] == "status" || rest[2] == "finalize")
	if rest[0] == "namespaces" && len(rest) >= 3 && !namespaceSubresource {
		req.namespace, rest = rest[1], rest[2:]
	}
	req.isResource = true
	req.resource = rest[0]
	if len(rest) > 1 {
		req.name = rest[1]
	}
	if len(rest) > 2 {
		req.subresource = strings.Join(rest[2:], "/")
	}
	return req
}
