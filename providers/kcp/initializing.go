// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"github.com/kcp-dev/sdk/apis/tenancy/initialization"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
)

// NewInitializing returns a provider that engages every workspace of the WorkspaceType named
// workspaceTypeName while it waits for that type's initializer: the logical clusters an
// initializer controller sets up. cfg points at the workspace of the WorkspaceType, whose
// spec.initializer must be true.
//
// It is the provider of New with other defaults: the endpoint object is the WorkspaceType, its
// endpoints are the initializing workspaces virtual workspace of each shard
// (InitializingURLs), the watched objects are LogicalClusters, and a logical cluster is ready
// while its status.initializers lists the type's initializer
// (initialization.InitializerForType), so that it is disengaged once its initializer removes
// itself or the workspace is deleted.
//
// The initializing virtual workspace lists and watches LogicalClusters only across workspaces,
// so an engaged logical cluster differs from one of New: its client and API reader read live
// from <url>/clusters/<name> (where the workspace's APIs are served while it initializes), its
// REST mapper discovers that workspace's APIs, and its cache serves LogicalClusters only, from
// the endpoint's shared cache, for controllers that watch them; asking it for another type
// fails.
func NewInitializing(cfg *rest.Config, workspaceTypeName string, opts Options) (*Provider, error) {
	return newProvider(cfg, workspaceTypeName, opts, initializingWorkspaces)
}

// InitializingURLs returns the URLs of the initializing workspaces virtual workspace that a
// WorkspaceType's status lists, one per shard: the default of Options.EndpointURLs for
// NewInitializing. It fails for another object, and for a type whose spec.initializer is false,
// whose workspaces wait for no initializer of its own.
func InitializingURLs(obj client.Object) ([]string, error) {
	wt, ok := obj.(*tenancyv1alpha1.WorkspaceType)
	if !ok {
		return nil, fmt.Errorf("%T is not a WorkspaceType", obj)
	}
	if !wt.Spec.Initializer {
		return nil, fmt.Errorf("WorkspaceType %s has spec.initializer false: its workspaces wait for no initializer of its own", wt.Name)
	}
	var urls []string
	for _, vw := range wt.Status.VirtualWorkspaces {
		// kcp names the type of each URL; older servers did not, and only the path tells.
		if vw.Type == tenancyv1alpha1.VirtualWorkspaceTypeInitializing ||
			vw.Type == "" && strings.Contains(vw.URL, "/initializingworkspaces/") {
			urls = append(urls, vw.URL)
		}
	}
	return normalizeURLs(urls), nil
}

// typeInitializer is the default readiness of NewInitializing: the initializer of the
// WorkspaceType, learned each time the provider reads the type's URLs (kcp names it after the
// logical cluster the type lives in, which only the object tells).
type typeInitializer struct {
	mu   sync.RWMutex
	name corev1alpha1.LogicalClusterInitializer
}

func (t *typeInitializer) learn(obj client.Object) {
	if wt, ok := obj.(*tenancyv1alpha1.WorkspaceType); ok {
		t.mu.Lock()
		t.name = initialization.InitializerForType(wt)
		t.mu.Unlock()
	}
}

// listed reports whether obj is a LogicalCluster whose status.initializers lists the
// initializer.
func (t *typeInitializer) listed(_ context.Context, obj client.Object) bool {
	lc, ok := obj.(*corev1alpha1.LogicalCluster)
	if !ok {
		return false
	}
	t.mu.RLock()
	name := t.name
	t.mu.RUnlock()
	return name != "" && slices.Contains(lc.Status.Initializers, name)
}
