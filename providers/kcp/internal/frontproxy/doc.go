// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package frontproxy is a stand-in for one shard of a kcp APIExport virtual workspace, for tests:
// a small HTTPS server that serves kcp's virtual-workspace protocol in front of real
// kube-apiservers, so that kcp providers (ours, and kcp-dev's own multicluster-provider) can be
// tested against real list/watch semantics without running kcp.
//
// # Model
//
// A Server is one shard. Its Backends are kube-apiservers; each backend is one logical cluster,
// its home cluster, named Backend.Name. An object on a backend that carries the kcp.io/cluster
// annotation itself belongs to that logical cluster instead; that lets a test put many logical
// clusters on few apiservers, as kcp puts many logical clusters on one shard, and is how the
// conformance harness of the kcp provider creates dozens of logical clusters. AddCluster makes
// such an extra logical cluster reachable under /clusters/<name>.
//
// # What it serves faithfully
//
//   - <prefix>/clusters/*/<api path> LIST and WATCH of any resource the backends serve (all
//     namespaces or one): the lists and watches of every backend, merged, every object annotated
//     kcp.io/cluster with its logical cluster. Label and field selectors are passed on.
//   - Resource versions of wildcard lists and watches: all backends of a test fleet share one
//     etcd, so an object's resourceVersion is authentic and can be used for updates through the
//     scoped path. The resourceVersion of a merged list, and of the bookmarks of a merged watch,
//     is a composite "mcr-kcp.<base64 JSON>" holding the resourceVersion reached on each backend;
//     a watch from a composite version resumes every backend exactly where it was. After every
//     event the watch sends a bookmark with the new composite version (when the client allows
//     bookmarks; reflectors do), so that a reflector always resumes from a composite version. A
//     watch from a plain resourceVersion (an object's) cannot be resumed exactly on several
//     backends and gets 410 Gone, which makes a reflector relist; so does an expired version on
//     any backend.
//   - Streaming lists (watch with sendInitialEvents=true, the WatchListClient default of
//     client-go): each backend's initial events are passed on, and one bookmark annotated
//     k8s.io/initial-events-end with the composite version follows once every backend has sent
//     its own.
//   - Discovery and OpenAPI under /clusters/* (from the first backend: every backend is expected
//     to serve the same APIs, as every logical cluster of a virtual workspace does).
//   - <prefix>/clusters/<name>/<api path>: every request of that logical cluster (discovery,
//     get, create, update, patch, delete, subresources such as status), forwarded to its
//     backend. Lists and watches are filtered to the logical cluster; objects in JSON responses
//     get the kcp.io/cluster annotation; a GET of an object of another logical cluster on the
//     same backend is 404; a create through a logical cluster that is not its backend's home
//     cluster is annotated with that cluster, so the new object belongs to it (JSON bodies, and
//     protobuf bodies of built-in types, which are sent on as JSON).
//   - A bearer token, when Options.Token is set (kcp authorizes access to a virtual workspace
//     through the APIExport's content permissions; the token stands for that). With
//     Options.Authorization instead, kcp's check itself: the caller's token is reviewed by the
//     apiserver that stands for the APIExport's workspace, which must allow the request's verb
//     on apiexports/content of the APIExport (a TokenReview and a SubjectAccessReview per
//     request; a GET of an object counts as list).
//
// # What it does not serve
//
//   - Anything of kcp but the virtual-workspace paths: no workspaces, APIExports, APIBindings
//     controllers, permission claims or APIResourceSchemas. The APIExportEndpointSlice is a CRD
//     on a plain apiserver (CRDs in this package), and the test writes its status.endpoints.
//   - Protobuf responses: merged and rewritten responses are JSON, whatever the client prefers
//     (client-go and controller-runtime clients accept JSON as well). Tables are not served.
//   - Pagination of wildcard lists: limit and continue are ignored, one page holds everything.
//   - resourceVersionMatch=Exact on wildcard lists: the list is served fresh instead.
//   - Moving an object between logical clusters by changing its kcp.io/cluster annotation: the
//     watches of the old cluster do not see a DELETED event; scoped mutations by name (update,
//     patch, delete) are not checked against the object's logical cluster.
//   - Names of the objects of logical clusters that share a backend share that backend's
//     namespaces: two such clusters cannot hold objects of the same namespace and name (kcp
//     keeps them apart; tests give objects unique names).
//   - Authorization per logical cluster, kcp's per-cluster discovery, audit, quotas.
package frontproxy
