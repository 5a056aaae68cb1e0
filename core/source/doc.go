// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package source provides multi-cluster event sources. A source is a recipe: for every cluster a
// controller engages, ForCluster builds the controller-runtime source that watches that cluster.
// The controller starts it with the cluster's engage context, so everything it registers goes
// away when the cluster is disengaged.
//
// Kind watches one object type in every engaged cluster. It registers a removable handler on the
// cluster's shared informer without blocking for the initial list, marks events of the initial
// list (IsInInitialList), unwraps delete tombstones and waits for sync without polling.
//
// # Members that come back
//
// client-go retries the watch of a member whose apiserver refuses connections after a backoff
// that reaches 30 s, jittered up to 60 s, and tells nobody: no error handler runs and nothing a
// handler can see changes. Left to client-go, a member that returns from an outage is watched
// again up to a minute (measured: 34 to 84 s) later. Kind therefore keeps, for every member
// cache its handlers are on, one probe: while none of the member's watched informers makes
// progress it asks the member for GET /readyz with the member's own HTTP client, every 5 s;
// once the member does not answer (no HTTP status below 500 within 5 s), it probes with a
// backoff from 250 ms to 2 s, and when the member answers again it restarts, at once, each
// informer that has received nothing since: it removes the informer from the cache, gets a
// new one, copies the field indexes over and registers the same handlers on it. The handlers
// get what a resumed watch would have brought: creates (not marked as initial list) for
// objects created meanwhile, updates from the last state they saw, deletes with
// DeleteStateUnknown for objects that are gone, and nothing for objects that did not change.
// The member is reconciling again within about a second of its return (at most the 2 s probe
// backoff plus one list). Between probes nothing runs for a member (a timer, no goroutine).
//
// The restart replaces an informer in the member's cache: handlers registered on it by
// anything else than a Kind source are not moved to the new one. Providers build member
// clusters for the controllers and register nothing on them; the manager's own cluster (the
// host, where providers watch their inventory) is never restarted, and neither are informers
// that are not client-go shared informers (scoped views such as the namespace and kcp
// providers', multi-namespace caches). Informers a reconciler only reads from resume on
// client-go's backoff. See docs/reliability.md, "Faults on engaged members".
package source
