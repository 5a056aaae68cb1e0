// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package webhook serves admission webhooks for a fleet: one webhook server answers the
// validating and mutating webhooks registered in many member clusters, and each handler knows
// which member a request came from and gets that member's cluster object, to read related
// objects where the request was made.
//
// A Webhook routes each request to a cluster in one of two ways:
//
//   - Per-cluster paths (the default): each member's webhook configuration calls a path of its
//     own, ClusterPath(Path, name), that is Path + "/" + EscapeClusterName(name), the local
//     cluster Path itself. Paths come and go with the engagements: the Webhook is a
//     multicluster.Aware, and a cluster is served from the moment it is engaged until its engage
//     context ends.
//   - A ClusterResolver: every member calls Path, and a function tells the cluster from the
//     request. KCPClusterResolver reads kcp's kcp.io/cluster annotation, so one webhook
//     configuration in an APIExport serves every workspace that binds it.
//
// A request for a cluster the webhook does not serve, or whose cluster the resolver cannot
// tell, is denied or allowed as Options.UnknownCluster says (denied by default), with a message
// naming the cluster and the reason.
//
// Handlers are controller-runtime's admission handlers with the cluster added: Validator and
// Defaulter are admission.Validator and admission.Defaulter whose methods also take the cluster
// name and its cluster.Cluster; a raw admission.Handler finds both in its context
// (mccontext.ClusterFrom, mccontext.ClusterObjectFrom), and the logger in the context carries the
// cluster under "cluster". What the API server shows the client, messages and warnings, is
// redacted (redact.Text): errors of a member's client may quote its URL and credentials.
//
// ManagedBy builds a Webhook for a type and registers it with a manager: on the manager's
// webhook server, at its path and every path under it, and as an Aware, engaged with every
// cluster the manager engages. New and Register do the same in two steps, for any handler.
//
// Configuration renders, per member, the ValidatingWebhookConfiguration and
// MutatingWebhookConfiguration that call the server at that member's path with the server's CA
// bundle, through a URL (members outside the server's cluster, or envtest members on
// 127.0.0.1) or a Service reference, and applies (server-side apply: idempotent) or removes
// them in a member. For tests, envtest.NewWebhookEndpoint (mcr.dev/core/envtest) mints a
// serving certificate for a local webhook server that the fleet's API servers call.
//
// docs/advanced/webhooks.md in the mcr repository is the guide: routing, failure policies,
// certificates, sharded managers and kcp.
package webhook
