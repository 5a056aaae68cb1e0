// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/core/providers/kit"
)

// Placement selects the PlacementDecisions (KEP-5313) whose ClusterProfiles the provider
// engages: the union of the profiles every selected slice references. All slices of one
// decision carry the same multicluster.x-k8s.io/decision-key label, so selecting by DecisionKey
// reads a decision split over several slices as one. Empty fields select everything: a
// Placement{} follows every PlacementDecision of the namespaces the provider watches.
type Placement struct {
	// Namespace is where the PlacementDecisions are. A reference without a namespace names a
	// ClusterProfile in its slice's namespace.
	//
	// Defaults to "": every namespace the provider's host cache holds (Options.Namespaces
	// with New).
	Namespace string

	// DecisionKey selects the slices labeled multicluster.x-k8s.io/decision-key=<DecisionKey>.
	//
	// Defaults to "": any decision key.
	DecisionKey string

	// PlacementKey selects the slices labeled multicluster.x-k8s.io/placement-key=<PlacementKey>,
	// the decisions of one workload.
	//
	// Defaults to "": any placement key.
	PlacementKey string

	// Selector further selects slices by label.
	//
	// Defaults to nil: no further selection.
	Selector labels.Selector
}

// Reasons of the Events the provider records on PlacementDecisions (with Options.Placement).
const (
	// ReasonUnknownClusterProfile (Warning): a selected slice references a ClusterProfile that
	// does not exist. It is counted in Errors and BrokenClusters and listed as failing in the
	// provider's FleetStatus until the profile appears or the reference goes.
	ReasonUnknownClusterProfile = "UnknownClusterProfile"

	// ReasonPlacementDecisionRemoved (Normal): a selected slice was deleted; the profiles that
	// no other selected slice references are disengaged.
	ReasonPlacementDecisionRemoved = "PlacementDecisionRemoved"
)

// PlacementDecisionsRemoved counts the selected PlacementDecision slices that were deleted,
// summed over the providers of the process.
var PlacementDecisionsRemoved = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "mcr_clusterprofile_provider_placement_decisions_removed_total",
	Help: "Number of selected PlacementDecision slices that were deleted.",
})

func init() {
	ctrlmetrics.Registry.MustRegister(PlacementDecisionsRemoved)
}

// selector returns the label selector of the slices pl selects.
func (pl *Placement) selector() (labels.Selector, error) {
	sel := labels.NewSelector()
	if pl.Selector != nil {
		reqs, _ := pl.Selector.Requirements()
		sel = sel.Add(reqs...)
	}
	for key, value := range map[string]string{v1alpha1.DecisionKeyLabel: pl.DecisionKey, v1alpha1.PlacementKeyLabel: pl.PlacementKey} {
		if value == "" {
			continue
		}
		req, err := labels.NewRequirement(key, selection.Equals, []string{value})
		if err != nil {
			return nil, fmt.Errorf("Options.Placement: %w", err)
		}
		sel = sel.Add(*req)
	}
	return sel, nil
}

// selectsSlice reports whether the slice obj is one of the Placement's.
func (p *Provider) selectsSlice(obj client.Object) bool {
	pl := p.opts.Placement
	return (pl.Namespace == "" || obj.GetNamespace() == pl.Namespace) &&
		p.placementSelector.Matches(labels.Set(obj.GetLabels()))
}

// profileRefs returns the keys of the ClusterProfiles a slice references.
func profileRefs(pd *v1alpha1.PlacementDecision) []types.NamespacedName {
	keys := make([]types.NamespacedName, 0, len(pd.Decisions))
	for _, d := range pd.Decisions {
		ns := d.ClusterProfileRef.Namespace
		if ns == "" {
			ns = pd.Namespace
		}
		keys = append(keys, types.NamespacedName{Namespace: ns, Name: d.ClusterProfileRef.Name})
	}
	return keys
}

// placementSource watches the selected PlacementDecisions: each slice that is added, changed
// or deleted queues the profiles it references (before and after), and a deleted slice is
// reported.
func (p *Provider) placementSource() kit.Source[types.NamespacedName] {
	return placementSource{p: p, objects: kit.HostObjects[types.NamespacedName]{
		Watches: []kit.Watch[types.NamespacedName]{{
			Object: &v1alpha1.PlacementDecision{},
			Keys: func(o client.Object) []types.NamespacedName {
				pd, ok := o.(*v1alpha1.PlacementDecision)
				if !ok || !p.selectsSlice(pd) {
					return nil
				}
				return profileRefs(pd)
			},
			// A slice that loses a reference, or stops being selected, concerns the profiles
			// it referenced.
			KeysOfOld:    true,
			InformerHint: "is the PlacementDecision CRD installed?",
			SyncHint:     "is the PlacementDecision CRD installed, and does the provider have list and watch permission on placementdecisions?",
		}},
	}}
}

// placementSource is the HostObjects source of PlacementDecisions plus the report of deleted
// slices, which HostObjects' key mapping cannot tell from other changes.
type placementSource struct {
	p       *Provider
	objects kit.HostObjects[types.NamespacedName]
}

func (s placementSource) Start(ctx context.Context, e *kit.Engine[types.NamespacedName]) (func(), error) {
	stopObjects, err := s.objects.Start(ctx, e)
	if err != nil {
		return nil, err
	}
	informer, err := s.p.host.GetCache().GetInformer(ctx, &v1alpha1.PlacementDecision{})
	if err != nil {
		stopObjects()
		return nil, fmt.Errorf("%s: getting the host's informer for PlacementDecisions: %w", providerName, err)
	}
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if pd, ok := kitObject(obj); ok && s.p.selectsSlice(pd) {
			s.p.reportRemovedSlice(pd)
		}
	}})
	if err != nil {
		stopObjects()
		return nil, fmt.Errorf("%s: watching the host's PlacementDecisions: %w", providerName, err)
	}
	return func() {
		_ = informer.RemoveEventHandler(reg)
		stopObjects()
	}, nil
}

// kitObject returns the PlacementDecision of an informer notification.
func kitObject(obj any) (*v1alpha1.PlacementDecision, bool) {
	o, ok := kit.ObjectOf(obj)
	if !ok {
		return nil, false
	}
	pd, ok := o.(*v1alpha1.PlacementDecision)
	return pd, ok
}

// reportRemovedSlice logs, counts and records an Event on a deleted slice.
func (p *Provider) reportRemovedSlice(pd *v1alpha1.PlacementDecision) {
	PlacementDecisionsRemoved.Inc()
	msg := fmt.Sprintf("PlacementDecision deleted; the %d ClusterProfiles it referenced are disengaged unless another selected slice references them", len(pd.Decisions))
	p.engine.Logger().Info(msg, "placementDecision", client.ObjectKeyFromObject(pd), "decisionKey", pd.Labels[v1alpha1.DecisionKeyLabel])
	p.engine.Record(pd, nil, corev1.EventTypeNormal, ReasonPlacementDecisionRemoved, msg)
}

// placedBy returns a selected slice that references the profile key, nil when none does.
func (p *Provider) placedBy(ctx context.Context, key types.NamespacedName) (*v1alpha1.PlacementDecision, error) {
	list := &v1alpha1.PlacementDecisionList{}
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: p.placementSelector}}
	if ns := p.opts.Placement.Namespace; ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	if err := p.host.GetCache().List(ctx, list, opts...); err != nil {
		return nil, err
	}
	for i := range list.Items {
		for _, ref := range profileRefs(&list.Items[i]) {
			if ref == key {
				return &list.Items[i], nil
			}
		}
	}
	return nil, nil
}

// syncPlaced is the sync of a provider with Options.Placement: a profile that no selected slice
// references is not engaged, a reference to a profile that does not exist is reported, and a
// placed profile is synced as without Placement.
func (p *Provider) syncPlaced(ctx context.Context, key types.NamespacedName) kit.Result {
	name := ClusterName(key.Namespace, key.Name)
	slice, err := p.placedBy(ctx, key)
	if err != nil {
		p.engine.Logger().Error(err, "Reading the PlacementDecisions from the host cache", "cluster", name)
		return kit.Result{Retry: true}
	}
	cp := &v1alpha1.ClusterProfile{}
	err = p.host.GetCache().Get(ctx, key, cp)
	if err != nil && !apierrors.IsNotFound(err) {
		p.engine.Logger().Error(err, "Reading the ClusterProfile from the host cache", "cluster", name)
		return kit.Result{Retry: true}
	}
	exists := err == nil
	switch {
	case slice == nil && exists:
		p.disengage(key, cp, "no selected PlacementDecision references the ClusterProfile")
		return kit.Result{}
	case slice == nil:
		p.forget(key, "no selected PlacementDecision references the ClusterProfile, which is gone")
		return kit.Result{}
	case !exists:
		if p.engine.IsEngaged(name) {
			p.forget(key, "the ClusterProfile is gone")
		}
		err := fmt.Errorf("PlacementDecision %s/%s references ClusterProfile %s, which does not exist", slice.Namespace, slice.Name, key)
		return p.engine.Fail(key, kit.Member{Name: name, Regarding: slice}, kit.Permanent(ReasonUnknownClusterProfile, err))
	}
	return p.sync(ctx, key)
}
