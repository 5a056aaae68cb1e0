// Package source provides multi-cluster event sources. A source is a recipe: for every cluster a
// controller engages, ForCluster builds the controller-runtime source that watches that cluster.
// The controller starts it with the cluster's engage context, so everything it registers goes
// away when the cluster is disengaged.
//
// Kind watches one object type in every engaged cluster. It registers a removable handler on the
// cluster's shared informer without blocking for the initial list, marks events of the initial
// list (IsInInitialList), unwraps delete tombstones and waits for sync without polling.
package source
