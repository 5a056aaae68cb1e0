// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/core/multicluster"
)

// Well-known KEP-2149 cluster properties, which a cluster manager copies from the member's
// about.k8s.io ClusterProperty objects into ClusterProfile status.properties.
const (
	// PropertyClusterID names the cluster's id: unique within its ClusterSet while it is a
	// member and immutable then, a DNS subdomain (the kube-system namespace UID is recommended).
	PropertyClusterID = "cluster.clusterset.k8s.io"

	// PropertyClusterSet names the ClusterSet the cluster belongs to; present exactly while it
	// is a member.
	PropertyClusterSet = "clusterset.k8s.io"
)

// Identity is the KEP-2149 identity of an engaged cluster, read from its ClusterProfile's
// status.properties. A field is empty when the cluster manager does not report the property.
type Identity struct {
	// ClusterID is the value of the cluster.clusterset.k8s.io property.
	ClusterID string
	// ClusterSet is the value of the clusterset.k8s.io property.
	ClusterSet string
}

// IdentityOf returns the identity a ClusterProfile reports.
func IdentityOf(cp *v1alpha1.ClusterProfile) Identity {
	var id Identity
	for _, prop := range cp.Status.Properties {
		switch prop.Name {
		case PropertyClusterID:
			id.ClusterID = prop.Value
		case PropertyClusterSet:
			id.ClusterSet = prop.Value
		}
	}
	return id
}

// Validate checks the identity against KEP-2149: the cluster id must be set and be a DNS
// subdomain (RFC 1123) of at most 128 characters, and a cluster that reports an id is expected to
// be a member of a ClusterSet.
func (id Identity) Validate() error {
	var errs []error
	switch {
	case id.ClusterID == "":
		errs = append(errs, fmt.Errorf("property %s is missing", PropertyClusterID))
	case len(id.ClusterID) > 128:
		errs = append(errs, fmt.Errorf("property %s is longer than 128 characters", PropertyClusterID))
	default:
		if msgs := validation.IsDNS1123Subdomain(id.ClusterID); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("property %s is not a DNS subdomain: %s", PropertyClusterID, strings.Join(msgs, "; ")))
		}
	}
	if id.ClusterSet == "" {
		errs = append(errs, fmt.Errorf("property %s is missing", PropertyClusterSet))
	}
	return errors.Join(errs...)
}

// Identity returns the KEP-2149 identity of the engaged cluster of that name, as its
// ClusterProfile reported it when the provider last looked at the profile (every change of the
// profile is looked at). It returns an error wrapping multicluster.ErrClusterNotFound when no
// such cluster is engaged. Values are returned as reported; Identity.Validate checks them.
func (p *Provider) Identity(name multicluster.ClusterName) (Identity, error) {
	var id *Identity
	if key, err := ClusterKey(name); err == nil {
		p.mu.Lock()
		if st := p.profiles[key]; st != nil {
			id = st.identity
		}
		p.mu.Unlock()
	}
	if id == nil {
		return Identity{}, fmt.Errorf("cluster %q: %w", name, multicluster.ErrClusterNotFound)
	}
	if _, err := p.GetTyped(context.Background(), name); err != nil {
		return Identity{}, err
	}
	return *id, nil
}
