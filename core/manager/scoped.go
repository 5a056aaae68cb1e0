// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package manager

import (
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// scopedManager is the local manager with another cluster's cluster methods.
type scopedManager struct {
	manager.Manager
	cluster cluster.Cluster
}

func (s *scopedManager) GetHTTPClient() *http.Client          { return s.cluster.GetHTTPClient() }
func (s *scopedManager) GetConfig() *rest.Config              { return s.cluster.GetConfig() }
func (s *scopedManager) GetCache() ctrlcache.Cache            { return s.cluster.GetCache() }
func (s *scopedManager) GetScheme() *runtime.Scheme           { return s.cluster.GetScheme() }
func (s *scopedManager) GetClient() client.Client             { return s.cluster.GetClient() }
func (s *scopedManager) GetFieldIndexer() client.FieldIndexer { return s.cluster.GetFieldIndexer() }
func (s *scopedManager) GetRESTMapper() meta.RESTMapper       { return s.cluster.GetRESTMapper() }
func (s *scopedManager) GetAPIReader() client.Reader          { return s.cluster.GetAPIReader() }
func (s *scopedManager) GetEventRecorderFor(n string) record.EventRecorder {
	return s.cluster.GetEventRecorderFor(n)
}
func (s *scopedManager) GetEventRecorder(n string) recorder.EventRecorder {
	return s.cluster.GetEventRecorder(n)
}
