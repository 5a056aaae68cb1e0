// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package kit is the provider kit: the one engine every provider of mcr runs on, so that a
// provider is the code that says where members come from and nothing else.
//
// A provider embeds Members, which supplies the provider contract (Get, IndexField, Start) and
// builds its Engine in Members.Init. It has three parts, and the kit supplies everything around
// them:
//
//   - its Options embed kit.Options, the fields every provider shares (Policy, RESTOptions,
//     ClusterOptions, CacheSyncTimeout, SkipAccessCheck, retry delays, ResyncPeriod,
//     ExecTimeout, ExecMaxOutput, EventRecorder, Logger) with one set of defaults applied by
//     Options.SetDefaults;
//   - its Sources say which keys to sync: objects on a host cluster (HostObjects), files and
//     directories (Files), or anything that must be asked now and then, such as a command-line
//     tool or a list of endpoints (Poll); Desired holds what such a source last saw;
//   - its Sync turns one key into members: it reads the source of truth (a host object with
//     Engine.GetHostObject, which logs and retries a failed read) and calls Engine.Engage with
//     each member's name and rest.Config, Engine.Disengage for members that must go, and
//     Engine.Fail for what the provider itself finds wrong.
//
// The Engine runs the sources and a keyed, rate-limited queue whose keys are synced in parallel
// (each key by one goroutine at a time), retried with exponential backoff and resynced
// periodically. Engine.Engage is the one engage step: default QPS and Burst and RESTOptions,
// cluster.New with ClusterOptions, the access check (a SelfSubjectReview), the
// engage in the provider's clusters.Clusters (replacing the instance when credentials change,
// compared by content), and one way of reporting the outcome (a log line, an Event on the
// member's object, the provider's errors counter and broken gauge, each problem reported once
// until it changes).
//
// The policy for a member that cannot be reached is the same in every provider: it is not
// engaged; it gets a ClusterUnreachable (or Unauthorized) problem and is retried with backoff
// between Options.RetryMinDelay and Options.RetryMaxDelay while the others carry on. A member
// whose new credentials are unusable keeps the engaged instance with the credentials that work,
// and reports the problem. A member whose cluster stops on its own is engaged again.
//
// A member's exec credential plugin is run by the kit, not by client-go: each run bounded by
// Options.ExecTimeout and Options.ExecMaxOutput, in a process group of its own that is killed
// when the run ends, the member is disengaged, an engage attempt fails or the provider stops,
// so that Start returns whatever a plugin does. Engage runs it first, and reports a plugin that
// fails, floods or hangs as CredentialPluginFailed, retried with backoff.
//
// Credentials are kept out of what the kit reports by construction: every log line
// (Options.Logger is wrapped by redact.Logger), every Event note (Engine.Record), every problem
// (Problems.Report) and every error of the kit pass through redact.Text of mcr.dev/core/redact,
// which removes URLs' user info and queries, Authorization headers, bearer tokens, JWTs and
// private keys (and, in Engine.Fail, the member's own credential values, see redact.Secrets).
// Engine.Engage refuses a member whose server carries user info, a query or a fragment before
// client-go sees it.
// TestEngineNeverReportsCredentials proves it on real API servers.
//
// The package keeps no global state; its metrics are the provider's, created and registered by
// RegisterMetrics. A provider that offers multicluster-runtime's New-then-SetupWithManager API
// embeds a Deferred of mcr.dev/core/providers/compat.
// docs/providers/custom.md walks through writing a provider with it.
package kit
