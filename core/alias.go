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

	// GetConfig, GetConfigOrDie, SetupSignalHandler, SetLogger, Log, LoggerFrom, LoggerInto,
	// CreateOrUpdate and SetControllerReference are controller-runtime's.
	GetConfig              = ctrl.GetConfig
	GetConfigOrDie         = ctrl.GetConfigOrDie
	SetupSignalHandler     = ctrl.SetupSignalHandler
	SetLogger              = ctrl.SetLogger
	Log                    = ctrl.Log
	LoggerFrom             = ctrl.LoggerFrom
	LoggerInto             = ctrl.LoggerInto
	CreateOrUpdate         = ctrl.CreateOrUpdate
	SetControllerReference = ctrl.SetControllerReference
)
