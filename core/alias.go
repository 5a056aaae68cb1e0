// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package mcr

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"mcr.dev/core/builder"
	"mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/reconcile"
)

// Manager runs controllers across a fleet of clusters.
type Manager = manager.Manager

// Options are the manager options (controller-runtime's).
type Options = manager.Options

// Builder builds multi-cluster controllers.
type Builder = builder.Builder

// Request is a reconcile request in a cluster of the fleet.
type Request = reconcile.Request

// Result is the result of a reconcile.
type Result = reconcile.Result

// Func is a reconciler function.
type Func = reconcile.Func

// ClusterName names a cluster of the fleet.
type ClusterName = multicluster.ClusterName

// Provider discovers the clusters of a fleet.
type Provider = multicluster.Provider

// LocalCluster is the name of the cluster the process runs in.
const LocalCluster = manager.LocalCluster

var (
	// NewManager creates a multi-cluster manager; the provider may be nil.
	NewManager = manager.New
	// NewControllerManagedBy starts building a multi-cluster controller.
	NewControllerManagedBy = builder.ControllerManagedBy
	// ErrClusterNotFound is returned for clusters that are not part of the fleet.
	ErrClusterNotFound = multicluster.ErrClusterNotFound

	// GetConfig returns the config of the cluster the process runs in (controller-runtime's).
	GetConfig = ctrl.GetConfig
	// GetConfigOrDie is GetConfig, exiting on error.
	GetConfigOrDie = ctrl.GetConfigOrDie
	// SetupSignalHandler returns a context canceled on SIGTERM or SIGINT.
	SetupSignalHandler = ctrl.SetupSignalHandler
	// SetLogger sets the logger of controller-runtime and mcr.
	SetLogger = ctrl.SetLogger
	// Log is the base logger.
	Log = ctrl.Log
	// LoggerFrom returns the logger of a context; in a reconcile it carries the cluster.
	LoggerFrom = ctrl.LoggerFrom
	// LoggerInto stores a logger in a context.
	LoggerInto = ctrl.LoggerInto
	// CreateOrUpdate creates or updates an object with a mutate function.
	CreateOrUpdate = ctrl.CreateOrUpdate
	// SetControllerReference sets the owner's controller reference on an object.
	SetControllerReference = ctrl.SetControllerReference
)
