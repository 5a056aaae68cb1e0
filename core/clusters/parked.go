// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"mcr.dev/core/internal/served"
	"mcr.dev/core/metrics"
	"mcr.dev/core/multicluster"
)

// NotServed reports whether err says that a cluster does not serve a kind (a RESTMapper's "no
// matches for kind" error, also wrapped), and names what is not served: "the cluster does not
// serve Widget.example.com in version v1". Controllers park their sources and Clusters its
// indexes on such errors instead of retrying them as failures.
func NotServed(err error) (reason string, ok bool) {
	if !meta.IsNoMatchError(err) {
		return "", false
	}
	var kind *meta.NoKindMatchError
	if errors.As(err, &kind) {
		reason = "the cluster does not serve " + kind.GroupKind.String()
		if len(kind.SearchedVersions) > 0 {
			reason += " in version " + strings.Join(kind.SearchedVersions, ", ")
		}
		return reason, true
	}
	var resource *meta.NoResourceMatchError
	if errors.As(err, &resource) {
		gv := resource.PartialResource.GroupVersion()
		if resource.PartialResource.Resource != "" {
			return "the cluster does not serve " + resource.PartialResource.GroupResource().String() + " in version " + gv.Version, true
		}
		return "the cluster does not serve the API group version " + gv.String(), true
	}
	return err.Error(), true
}

// applyIndex applies idx to e's cluster and, for an index on a kind the cluster may stop
// serving (a CRD), parks it again when the cluster does: the kind's informer, and the index
// with it, is removed from the cache then (see mcr.dev/core/internal/served).
func (c *Clusters[T]) applyIndex(ctx context.Context, e *entry[T], idx Index) error {
	// A kind that went away is still mapped by the cluster's REST mapper: IndexField would get
	// an informer that fails to list.
	if err := served.Check(ctx, e.cluster, idx.Object); err != nil {
		return err
	}
	if err := e.cluster.GetFieldIndexer().IndexField(ctx, idx.Object, idx.Field, idx.Extractor); err != nil {
		return err
	}
	o := c.Options.withDefaults()
	served.Watch(served.WithInterval(e.ctx, o.ParkedRetryMax), e.cluster, idx.Object, func(err error) {
		reason, _ := NotServed(err)
		c.park(e, idx, reason)
	})
	return nil
}

// parkedIndex is an index a cluster cannot have yet: it does not serve the indexed kind.
type parkedIndex struct {
	index Index
	// what describes the index for people: "field index <field> of <kind>".
	what string
}

// park records that e cannot have idx until it serves idx's kind, reports it, and makes sure a
// goroutine retries it.
func (c *Clusters[T]) park(e *entry[T], idx Index, reason string) {
	what := describeIndex(idx, e.cluster.GetScheme())
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.ctx.Err() != nil {
		return
	}
	for _, p := range e.parked {
		if p.index.Key() == idx.Key() {
			return
		}
	}
	e.parked = append(e.parked, parkedIndex{index: idx, what: what})
	metrics.ParkedFieldIndexes.Inc()
	o := c.Options.withDefaults()
	o.Logger.Info("Cluster does not serve the indexed kind; index parked until it does", "cluster", e.name, "index", what, "reason", reason)
	if !e.retrying {
		e.retrying = true
		go c.retryParked(e, o)
	}
}

// retryParked applies e's parked indexes, with backoff, until none is left or e ends.
func (c *Clusters[T]) retryParked(e *entry[T], o Options[T]) {
	backoff := time.Second
	for {
		select {
		case <-time.After(backoff):
		case <-e.ctx.Done():
			c.mu.Lock()
			metrics.ParkedFieldIndexes.Sub(float64(len(e.parked)))
			e.parked, e.retrying = nil, false
			c.mu.Unlock()
			return
		}
		backoff = min(2*backoff, o.ParkedRetryMax)

		c.mu.Lock()
		pending := slices.Clone(e.parked)
		c.mu.Unlock()
		var applied []string
		for _, p := range pending {
			err := c.applyIndex(e.ctx, e, p.index)
			switch {
			case err == nil:
				applied = append(applied, p.index.Key())
				o.Logger.Info("Cluster now serves the indexed kind; index applied", "cluster", e.name, "index", p.what)
			case !meta.IsNoMatchError(err) && e.ctx.Err() == nil:
				// The cluster may be down: keep trying, as for a kind it does not serve.
				o.Logger.V(1).Info("Cannot apply parked index yet", "cluster", e.name, "index", p.what, "reason", err.Error())
			}
		}

		c.mu.Lock()
		e.parked = slices.DeleteFunc(e.parked, func(p parkedIndex) bool { return slices.Contains(applied, p.index.Key()) })
		metrics.ParkedFieldIndexes.Sub(float64(len(applied)))
		if len(e.parked) == 0 {
			e.retrying = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

// ParkedIndexes returns, for each visible cluster that does not serve the kind of some
// recorded index, those indexes ("field index <field> of <kind>"). The fleet debug endpoint
// shows them (mcr.dev/core/manager.AddFleetDebugHandler).
func (c *Clusters[T]) ParkedIndexes() map[multicluster.ClusterName][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out map[multicluster.ClusterName][]string
	for name, e := range c.served {
		for _, p := range e.parked {
			if out == nil {
				out = map[multicluster.ClusterName][]string{}
			}
			out[name] = append(out[name], p.what)
		}
	}
	return out
}

// describeIndex names idx for people: its field and its object's kind (its Go type when the
// scheme does not know it).
func describeIndex(idx Index, scheme *runtime.Scheme) string {
	kind := fmt.Sprintf("%T", idx.Object)
	if gvk, err := apiutil.GVKForObject(idx.Object, scheme); err == nil {
		kind = gvk.GroupKind().String()
		if gvk.Version != "" {
			kind = gvk.Version + " " + kind
		}
	}
	return fmt.Sprintf("field index %s of %s", idx.Field, kind)
}
