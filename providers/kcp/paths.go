// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp

import (
	"context"
	"fmt"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/kcp-dev/logicalcluster/v3"

	"mcr.dev/core/multicluster"
)

// pathStore maps workspace paths (kcp.io/path) to logical cluster names, as the provider learns
// them from the watched objects.
type pathStore struct {
	mu     sync.Mutex
	byPath map[string]logicalcluster.Name
	byName map[logicalcluster.Name]string
}

func (s *pathStore) set(name logicalcluster.Name, path logicalcluster.Path) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byPath == nil {
		s.byPath = map[string]logicalcluster.Name{}
		s.byName = map[logicalcluster.Name]string{}
	}
	if old, ok := s.byName[name]; ok && s.byPath[old] == name {
		delete(s.byPath, old)
	}
	s.byPath[path.String()] = name
	s.byName[name] = path.String()
}

func (s *pathStore) forget(name logicalcluster.Name) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.byName[name]; ok {
		if s.byPath[old] == name {
			delete(s.byPath, old)
		}
		delete(s.byName, name)
	}
}

func (s *pathStore) lookup(path logicalcluster.Path) (logicalcluster.Name, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name, ok := s.byPath[path.String()]
	return name, ok
}

// ClusterNameForPath returns the name of the logical cluster whose watched objects carry the
// workspace path (annotation kcp.io/path, e.g. "root:org:team"), or a path that is a logical
// cluster name itself. It reports false for a path the provider has not seen.
func (p *Provider) ClusterNameForPath(path logicalcluster.Path) (multicluster.ClusterName, bool) {
	if name, ok := p.paths.lookup(path); ok {
		return multicluster.ClusterName(name.String()), true
	}
	if name, ok := path.Name(); ok {
		return multicluster.ClusterName(name.String()), true
	}
	return "", false
}

// GetByPath returns the engaged logical cluster of a workspace path (see ClusterNameForPath),
// or an error wrapping multicluster.ErrClusterNotFound.
func (p *Provider) GetByPath(ctx context.Context, path logicalcluster.Path) (cluster.Cluster, error) {
	name, ok := p.ClusterNameForPath(path)
	if !ok {
		return nil, fmt.Errorf("workspace path %q: %w", path, multicluster.ErrClusterNotFound)
	}
	return p.Get(ctx, name)
}
