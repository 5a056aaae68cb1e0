// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleet

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"

	corefleet "mcr.dev/core/fleet"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/redact"
)

// Backend reads the engaged logical clusters from their endpoints' shared caches: one read of
// each endpoint's informer, looked up in its indexes, instead of a request per logical cluster.
// It is the core fleet.Backend behind the provider's Fleet, and follows the engagements the
// provider reports with Engaged.
type Backend struct {
	log         logr.Logger
	syncTimeout time.Duration

	mu      sync.RWMutex
	members map[logicalcluster.Name]*member
	regs    map[*subscription]bool
}

var _ corefleet.Backend = &Backend{}

// New returns a Backend with no engaged logical cluster. List waits at most syncTimeout for an
// informer to sync; log gets the errors of event handlers that cannot be told about a logical
// cluster.
func New(log logr.Logger, syncTimeout time.Duration) *Backend {
	return &Backend{log: log, syncTimeout: syncTimeout}
}

// List reads each endpoint's shared informer of the type once, creating it on first use and
// waiting at most Options.CacheSyncTimeout for it to sync, and looks the engaged logical
// clusters up in its indexes; endpoints are read in parallel. A field selector matches fields
// indexed with the provider's IndexField. When an endpoint cannot be read, each logical
// cluster engaged through it fails with the endpoint's error (its URL redacted).
func (b *Backend) List(ctx context.Context, list client.ObjectList, o *client.ListOptions, only map[multicluster.ClusterName]bool) (corefleet.Listed, error) {
	var names map[logicalcluster.Name]bool
	if only != nil {
		names = map[logicalcluster.Name]bool{}
		for name := range only {
			names[logicalcluster.Name(name)] = true
		}
	}
	groups := b.byEndpoint(names)
	objs := make([][]client.Object, len(groups))
	errs := make([]error, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Go(func() {
			objs[i], errs[i] = b.listEndpoint(ctx, g, list, o)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("endpoint %s: %w", redact.Text(g.shared.URL()), redact.Error(errs[i]))
			}
		})
	}
	wg.Wait()

	listed := corefleet.Listed{Objects: map[multicluster.ClusterName][]client.Object{}, Failed: map[multicluster.ClusterName]error{}}
	for i, g := range groups {
		for _, m := range g.members {
			name := multicluster.ClusterName(m.name)
			if errs[i] != nil {
				listed.Failed[name] = errs[i]
			} else if _, ok := listed.Objects[name]; !ok {
				listed.Objects[name] = nil
			}
		}
		for _, obj := range objs[i] {
			name := multicluster.ClusterName(logicalcluster.From(obj))
			listed.Objects[name] = append(listed.Objects[name], obj)
		}
	}
	return listed, nil
}

// listEndpoint lists the objects of the engaged logical clusters of one endpoint: deep copies,
// with the list's item kind set.
func (b *Backend) listEndpoint(ctx context.Context, g endpointMembers, list client.ObjectList, o *client.ListOptions) ([]client.Object, error) {
	// The views of one endpoint share its cache, and what it serves.
	if err := g.members[0].view.Serves(list); err != nil {
		return nil, err
	}
	syncCtx, cancel := context.WithTimeout(ctx, b.syncTimeout)
	defer cancel()
	inf, err := g.shared.InformerFor(syncCtx, list)
	if err != nil {
		return nil, err
	}
	var out []client.Object
	for _, m := range g.members {
		// No limit: the Reader limits the whole fleet's list once sorted.
		objs, err := m.view.Select(inf, o, 0)
		if err != nil {
			return nil, fmt.Errorf("logical cluster %s: %w", m.name, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}
