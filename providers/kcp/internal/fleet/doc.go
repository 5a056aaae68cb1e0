// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package fleet is the kcp provider's fleet reader: the core fleet.Backend (mcr.dev/core/fleet)
// behind Provider.Fleet, reading every engaged logical cluster from its endpoint's shared cache
// (internal/cache) instead of sending a request per logical cluster.
//
// The provider tells the Backend of each engagement with the manager (Engaged, with the logical
// cluster's Scoped view); the engagement counts until its context ends. Logical clusters are
// grouped by endpoint, an endpoint standing for its Wildcard cache:
//
//   - backend.go: List reads each endpoint's informer of the type once and selects each engaged
//     logical cluster's objects from its indexes;
//   - handlers.go: AddEventHandler adds one handler per endpoint's informer, filters its events
//     by engaged logical cluster, and announces the objects of logical clusters that engage later;
//   - members.go: the engagements, by name and by endpoint.
package fleet
