// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// maxSliceSize is the most ClusterProfile references a PlacementDecision slice may hold.
const maxSliceSize = 100

// runScheduler is "placement schedule": a stand-in for a scheduler (OCM, KubeFleet, one of
// your own) that publishes its decision.
func runScheduler(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("placement schedule", flag.ContinueOnError)
	hub := &managerFlags{}
	fs.StringVar(&hub.kubeconfig, "kubeconfig", "", "kubeconfig of the hub (default: in-cluster config, $KUBECONFIG, ~/.kube/config)")
	namespace := fs.String("namespace", "default", "hub namespace of the decision's slices (and of the ClusterProfiles named)")
	decisionKey := fs.String("decision-key", "", "the decision: its slices are labeled multicluster.x-k8s.io/decision-key=<value> and named <value>-<index>")
	placementKey := fs.String("placement-key", "", "the workload the decision is for, as the multicluster.x-k8s.io/placement-key label (default: none)")
	sliceSize := fs.Int("slice-size", maxSliceSize, "most references per slice (at most 100)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *decisionKey == "" {
		return fmt.Errorf("set -decision-key")
	}
	cfg, err := hub.HostConfig()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("creating the hub client: %w", err)
	}
	return writeDecision(ctx, c, decision{
		Namespace: *namespace, DecisionKey: *decisionKey, PlacementKey: *placementKey,
		SliceSize: *sliceSize, Profiles: fs.Args(),
	})
}

// decision is what the scheduler stand-in publishes.
type decision struct {
	Namespace, DecisionKey, PlacementKey string
	// SliceSize is the most references per slice; 0 or more than 100 means 100.
	SliceSize int
	// Profiles are the names of the chosen ClusterProfiles of Namespace, in order.
	Profiles []string
}

// writeDecision writes d as slices <decision key>-0, -1, ... of at most d.SliceSize
// references, all labeled with the decision key and their index, and deletes the slices of
// the decision it no longer needs. Consumers read the slices as one decision; a cluster added
// to one slice before it is removed from another stays placed throughout.
func writeDecision(ctx context.Context, c client.Client, d decision) error {
	size := d.SliceSize
	if size <= 0 || size > maxSliceSize {
		size = maxSliceSize
	}
	slices := 0
	for start := 0; start < len(d.Profiles); start += size {
		refs := []v1alpha1.ClusterDecision{}
		for _, name := range d.Profiles[start:min(start+size, len(d.Profiles))] {
			refs = append(refs, v1alpha1.ClusterDecision{
				ClusterProfileRef: v1alpha1.ClusterProfileReference{Name: name},
				Reason:            "chosen by the scheduler stand-in",
			})
		}
		if err := writeSlice(ctx, c, d, slices, refs); err != nil {
			return err
		}
		slices++
	}
	// The slices beyond those written belong to a larger decision of before.
	list := &v1alpha1.PlacementDecisionList{}
	if err := c.List(ctx, list, client.InNamespace(d.Namespace), client.MatchingLabels{v1alpha1.DecisionKeyLabel: d.DecisionKey}); err != nil {
		return fmt.Errorf("listing the slices of decision %s: %w", d.DecisionKey, err)
	}
	for i := range list.Items {
		pd := &list.Items[i]
		if index, err := strconv.Atoi(pd.Labels[v1alpha1.DecisionIndexLabel]); err == nil && index < slices {
			continue
		}
		if err := c.Delete(ctx, pd); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting slice %s: %w", pd.Name, err)
		}
	}
	return nil
}

// writeSlice creates or updates slice index of d with refs.
func writeSlice(ctx context.Context, c client.Client, d decision, index int, refs []v1alpha1.ClusterDecision) error {
	labels := map[string]string{
		v1alpha1.DecisionKeyLabel:   d.DecisionKey,
		v1alpha1.DecisionIndexLabel: strconv.Itoa(index),
	}
	if d.PlacementKey != "" {
		labels[v1alpha1.PlacementKeyLabel] = d.PlacementKey
	}
	key := client.ObjectKey{Namespace: d.Namespace, Name: fmt.Sprintf("%s-%d", d.DecisionKey, index)}
	pd := &v1alpha1.PlacementDecision{}
	err := c.Get(ctx, key, pd)
	switch {
	case apierrors.IsNotFound(err):
		pd = &v1alpha1.PlacementDecision{
			ObjectMeta:    metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: labels},
			Decisions:     refs,
			SchedulerName: "placement-example",
		}
		err = c.Create(ctx, pd)
	case err == nil:
		pd.Labels, pd.Decisions, pd.SchedulerName = labels, refs, "placement-example"
		err = c.Update(ctx, pd)
	}
	if err != nil {
		return fmt.Errorf("writing slice %s: %w", key, err)
	}
	return nil
}
