// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/multicluster"
)

// Harness connects the suite to one provider implementation and to the provider's source of
// truth (Secrets, files, Cluster API objects, an in-memory list, ...). The suite creates, updates
// and deletes members through it and watches how the provider reacts.
//
// Every method may be called concurrently and must honor ctx. An error from a Harness method
// makes the test "errored" (the suite could not decide), never "failed": only the provider's
// behavior fails a test.
//
// Optional capabilities, needed by the extended features that use them, are separate
// interfaces: CredentialRotator (CredentialRotation) and ReadinessToggler (MemberReadiness).
// KubeconfigHarness implements Harness and CredentialRotator for providers whose source of truth
// holds one kubeconfig per member; Fleet supplies real clusters for members.
type Harness interface {
	// NewProvider returns a new, not yet started provider instance that reads the harness's
	// source of truth. Each test gets its own instance; some tests create two in turn on the
	// same source of truth (a restart), and they must see the same members.
	//
	// ctx ends after the suite has stopped the provider (its Start has returned): tie to it
	// whatever must run alongside the provider, such as a host cluster the provider reads from
	// but does not start itself.
	NewProvider(ctx context.Context) (multicluster.Provider, error)

	// CreateMember adds a member to the source of truth. name is chosen by the suite: a
	// DNS-1123 label, unique within the test binary. CreateMember may be called before the
	// provider starts (the member then exists at start) or while it runs.
	//
	// The returned Member says under which name the provider will engage the member and how to
	// reach the member directly, without the provider.
	CreateMember(ctx context.Context, name string) (Member, error)

	// UpdateMember changes the member's entry in the source of truth without changing which
	// cluster it is or how to reach it: a label or annotation, the same credentials written
	// again, a resync. The provider must not re-engage the member because of it.
	UpdateMember(ctx context.Context, m Member) error

	// DeleteMember removes the member from the source of truth. The provider must disengage it.
	DeleteMember(ctx context.Context, m Member) error
}

// Member is one member of the source of truth, as returned by Harness.CreateMember.
type Member struct {
	// ID is the name the suite passed to CreateMember. The suite fills it in if the harness
	// leaves it empty; harnesses use it to find their own records of the member.
	ID string

	// Name is the cluster name under which the provider engages this member. It often equals
	// ID; a provider that prefixes or namespaces its names returns the full name here.
	Name multicluster.ClusterName

	// Client reaches the member directly, bypassing the provider. The suite writes marker and
	// index objects (ConfigMaps) with it and checks that the cluster the provider engaged
	// under Name sees them, i.e. that the engaged cluster talks to the right member.
	Client client.Client

	// Namespace is where the suite writes its objects through Client.
	//
	// Defaults to "default".
	Namespace string

	// ClusterNamespace is the namespace in which objects written to Namespace through Client
	// appear through the engaged cluster. Providers that map a namespace of a host cluster to a
	// cluster (namespace providers) set Namespace to the host namespace and ClusterNamespace to
	// the namespace the cluster shows it as.
	//
	// Defaults to Namespace.
	ClusterNamespace string
}

// withDefaults fills the defaulted fields of m; id is the name given to CreateMember.
func (m Member) withDefaults(id string) Member {
	if m.ID == "" {
		m.ID = id
	}
	if m.Namespace == "" {
		m.Namespace = "default"
	}
	if m.ClusterNamespace == "" {
		m.ClusterNamespace = m.Namespace
	}
	return m
}

// CredentialRotator is implemented by harnesses of providers that claim CredentialRotation.
type CredentialRotator interface {
	// RotateCredentials gives the member new credentials in the source of truth. The old
	// credentials must keep working until revokeOld is called; revokeOld must make them stop
	// working (the suite checks that it did, and reports "errored" otherwise) and return only
	// once the member refuses them. For InPlaceCredentialRefresh the new credentials must be of
	// the same user (a new token of the same ServiceAccount, as Fleet mints), since a provider
	// engages a new cluster for another identity.
	RotateCredentials(ctx context.Context, m Member) (revokeOld func(context.Context) error, err error)
}

// ServerMover is implemented by harnesses of providers that claim InPlaceCredentialRefresh.
type ServerMover interface {
	// MoveServer changes the server address of the member in the source of truth to another
	// address of the same apiserver, keeping its credentials: a provider must engage a new
	// cluster for it.
	MoveServer(ctx context.Context, m Member) error
}

// ReadinessToggler is implemented by harnesses of providers that claim MemberReadiness.
type ReadinessToggler interface {
	// SetReady marks the member ready or unready in the source of truth (a condition, a phase,
	// a health probe), the way the provider reads readiness. Members are ready when created.
	SetReady(ctx context.Context, m Member, ready bool) error
}
