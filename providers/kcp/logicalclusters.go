package kcp

import (
	"github.com/kcp-dev/logicalcluster/v3"

	"mcr.dev/core/multicluster"
)

// PathAnnotation is the annotation that holds the workspace path of a logical cluster
// (core.kcp.io LogicalClusterPathAnnotationKey). The provider reads it from the watched objects
// for GetByPath.
const PathAnnotation = "kcp.io/path"

// sync brings the engagement of one logical cluster of the endpoint in line with its objects of
// the watched type: engaged while one of them is ready, disengaged when none is or none is left.
// It returns true when engaging failed and should be retried with backoff.
func (e *endpoint) sync(name logicalcluster.Name) (retry bool) {
	clusterName := multicluster.ClusterName(name.String())
	log := e.log.WithValues("cluster", clusterName)

	objs, err := e.clusterObjects(name)
	if err != nil {
		log.Error(err, "Reading the logical cluster's objects from the wildcard cache")
		return true
	}
	ready := false
	var path logicalcluster.Path
	for _, o := range objs {
		ready = ready || e.p.opts.IsReady(o)
		if v := o.GetAnnotations()[PathAnnotation]; v != "" {
			path = logicalcluster.NewPath(v)
		}
	}
	switch {
	case len(objs) == 0:
		e.p.paths.forget(name)
	case !path.Empty():
		e.p.paths.set(name, path)
	}

	e.mu.Lock()
	_, engaged := e.engaged[clusterName]
	e.mu.Unlock()
	switch {
	case len(objs) == 0:
		if engaged {
			e.disengage(clusterName, "its last object is gone")
		}
		return false
	case !ready:
		if engaged {
			e.disengage(clusterName, "none of its objects is ready")
		} else {
			log.V(1).Info("Logical cluster not engaged: none of its objects is ready")
		}
		return false
	case engaged:
		// Changes of an engaged cluster's objects change nothing while one is ready.
		log.V(1).Info("Logical cluster stays engaged", "objects", len(objs))
		return false
	}

	if owner, claimed := e.p.claim(clusterName, e); !claimed {
		log.V(1).Info("Logical cluster is engaged through another endpoint", "owner", owner.url)
		return false
	}
	cl, err := newScopedCluster(e, name)
	if err != nil {
		e.p.release(clusterName, e)
		Errors.WithLabelValues(reasonEngageFailed).Inc()
		log.Error(err, "Logical cluster cannot be engaged")
		return false
	}
	// The cluster lives as long as the endpoint, never as long as this sync.
	if err := e.p.Add(e.ctx, clusterName, cl, e.p.aware); err != nil {
		e.p.release(clusterName, e)
		if e.ctx.Err() != nil {
			return false
		}
		Errors.WithLabelValues(reasonEngageFailed).Inc()
		log.Error(err, "Logical cluster cannot be engaged; retrying with backoff")
		return true
	}
	e.mu.Lock()
	e.engaged[clusterName] = struct{}{}
	e.mu.Unlock()
	LogicalClusters.Inc()
	log.Info("Engaged logical cluster")
	return false
}

// disengage disengages a logical cluster the endpoint engaged and returns once it has stopped.
func (e *endpoint) disengage(name multicluster.ClusterName, why string) {
	e.mu.Lock()
	_, engaged := e.engaged[name]
	delete(e.engaged, name)
	e.mu.Unlock()
	if !engaged {
		return
	}
	e.p.Remove(name)
	e.p.release(name, e)
	LogicalClusters.Dec()
	e.log.Info("Disengaged logical cluster: "+why, "cluster", name)
}
