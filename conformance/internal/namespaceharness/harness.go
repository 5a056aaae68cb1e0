// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package namespaceharness is the conformance harness of namespace providers, which turn every
// Namespace of a host cluster into a cluster: mcr's own (mcr.dev/core/providers/namespace) and
// multicluster-runtime's. Members are namespaces of a dedicated host apiserver.
package namespaceharness

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/conformance"
	"mcr.dev/core/multicluster"
)

// Harness creates members as namespaces of a host cluster. Each provider instance gets a host
// cluster (client and cache) of its own, started for as long as the provider runs, as a
// manager's local cluster would be.
type Harness struct {
	host      *rest.Config
	admin     client.Client
	clientset kubernetes.Interface
	newFunc   func(host cluster.Cluster) multicluster.Provider
	touches   atomic.Int64
}

var _ conformance.Harness = &Harness{}

// New returns a harness over the host apiserver; newProvider builds the provider under test
// from a started host cluster.
func New(host *rest.Config, newProvider func(host cluster.Cluster) multicluster.Provider) (*Harness, error) {
	admin, err := client.New(host, client.Options{})
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(host)
	if err != nil {
		return nil, err
	}
	return &Harness{host: host, admin: admin, clientset: cs, newFunc: newProvider}, nil
}

// NewProvider starts a host cluster that lives as long as ctx and builds the provider on it.
func (h *Harness) NewProvider(ctx context.Context) (multicluster.Provider, error) {
	hostCluster, err := cluster.New(h.host)
	if err != nil {
		return nil, err
	}
	go func() { _ = hostCluster.Start(ctx) }()
	if !hostCluster.GetCache().WaitForCacheSync(ctx) {
		return nil, errors.New("the host cache did not start")
	}
	return h.newFunc(hostCluster), nil
}

// CreateMember creates the namespace name on the host. The suite writes its objects into that
// namespace directly; the provider's cluster shows them in "default".
func (h *Harness) CreateMember(ctx context.Context, name string) (conformance.Member, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := h.admin.Create(ctx, ns); err != nil {
		return conformance.Member{}, err
	}
	return conformance.Member{
		Name:             multicluster.ClusterName(name),
		Client:           h.admin,
		Namespace:        name,
		ClusterNamespace: "default",
	}, nil
}

// UpdateMember sets a label on the namespace.
func (h *Harness) UpdateMember(ctx context.Context, m conformance.Member) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{"conformance.mcr.dev/touched":%q}}}`, strconv.FormatInt(h.touches.Add(1), 10))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: m.ID}}
	return h.admin.Patch(ctx, ns, client.RawPatch(types.MergePatchType, []byte(patch)))
}

// DeleteMember deletes the namespace and finalizes it at once: envtest runs no namespace
// controller, which would otherwise empty the namespace and remove its finalizer.
func (h *Harness) DeleteMember(ctx context.Context, m conformance.Member) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: m.ID}}
	if err := h.admin.Delete(ctx, ns); err != nil {
		return client.IgnoreNotFound(err)
	}
	current, err := h.clientset.CoreV1().Namespaces().Get(ctx, m.ID, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	current.Spec.Finalizers = nil
	_, err = h.clientset.CoreV1().Namespaces().Finalize(ctx, current, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
