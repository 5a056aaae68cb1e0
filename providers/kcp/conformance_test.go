// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	"mcr.dev/conformance"
	"mcr.dev/conformance/mcrproviders"
	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kcp"
	"mcr.dev/providers/kcp/internal/frontproxy"
)

// kcpHarness makes each conformance member a logical cluster of the test shards: the fleet
// picks one of east, west and north for it, the member's shard learns the logical cluster, and a
// ready APIBinding annotated with it appears there, as when a workspace binds the APIExport.
// The member's direct client is a client of the logical cluster through the shard's scoped
// path, so that the suite's markers are written into that logical cluster.
//
// The provider reaches kcp only through forwarders: one before the workspace of the slice and one
// before each shard, whose URLs the slice lists. StopSource takes them all down, which to the
// provider is a restart of kcp (as TestHostRestart stops every apiserver it depends on), while
// the shared apiservers and shards keep serving the package's other tests.
type kcpHarness struct {
	fleet *conformance.Fleet
	slice string
	// host is before the slice's workspace; links are every forwarder, host included.
	host  *envtest.Forwarder
	links []*envtest.Forwarder
}

var (
	_ conformance.Harness          = &kcpHarness{}
	_ conformance.ReadinessToggler = &kcpHarness{}
	_ conformance.SourceRestarter  = &kcpHarness{}
	_ conformance.Resyncer         = &kcpHarness{}
)

func (h *kcpHarness) NewProvider(context.Context) (multicluster.Provider, error) {
	cfg := providerConfig()
	cfg.Host = h.host.URL()
	return kcp.New(cfg, h.slice, kcp.Options{Options: providertest.TestKitOptions(kit.Options{CacheSyncTimeout: 30 * time.Second, ResyncPeriod: mcrproviders.Resync}, nil)})
}

// StopSource takes every forwarder down: connections to kcp are refused and open ones dropped.
func (h *kcpHarness) StopSource(context.Context) (func(context.Context) error, error) {
	for _, l := range h.links {
		l.Down()
	}
	return func(context.Context) error {
		var errs []error
		for _, l := range h.links {
			errs = append(errs, l.Up())
		}
		return errors.Join(errs...)
	}, nil
}

func (h *kcpHarness) ResyncPeriod() time.Duration { return mcrproviders.Resync }

// forwardShard puts a forwarder before the shard until the test ends and returns it with the
// shard's virtual workspace URL through it.
func forwardShard(t *testing.T, shard *frontproxy.Server) (*envtest.Forwarder, string) {
	t.Helper()
	u, err := url.Parse(shard.URL())
	if err != nil {
		t.Fatal(err)
	}
	link, err := envtest.StartForwarder(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(link.Close)
	u.Host = strings.TrimPrefix(link.URL(), "https://")
	return link, u.String()
}

// memberBinding returns the APIBinding of a member.
func memberBinding(fleet *conformance.Fleet, id string) (binding, error) {
	fm := fleet.Get(id)
	if fm == nil {
		return binding{}, fmt.Errorf("no fleet member %q", id)
	}
	return binding{backend: fm.Server().Name(), name: id + "-binding", cluster: logicalcluster.Name(id)}, nil
}

func (h *kcpHarness) CreateMember(ctx context.Context, id string) (conformance.Member, error) {
	fm, err := h.fleet.Add(ctx, id)
	if err != nil {
		return conformance.Member{}, err
	}
	backend, cluster := fm.Server().Name(), logicalcluster.Name(id)
	fail := func(err error) (conformance.Member, error) {
		shardOf(backend).RemoveCluster(cluster)
		return conformance.Member{}, errors.Join(err, h.fleet.Remove(ctx, id))
	}
	if err := shardOf(backend).AddCluster(cluster, logicalcluster.Name(backend)); err != nil {
		return fail(err)
	}
	obj := &apisv1alpha1.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: id + "-binding", Annotations: map[string]string{logicalcluster.AnnotationKey: id}},
		Spec: apisv1alpha1.APIBindingSpec{Reference: apisv1alpha1.BindingReference{
			Export: &apisv1alpha1.ExportBindingReference{Name: exportName},
		}},
	}
	if err := backends[backend].Create(ctx, obj); err != nil {
		return fail(fmt.Errorf("creating the APIBinding of %q: %w", id, err))
	}
	b := binding{backend: backend, name: obj.Name, cluster: cluster}
	if err := b.setReadyErr(ctx, true); err != nil {
		return fail(errors.Join(fmt.Errorf("making the APIBinding of %q ready: %w", id, err), b.delete(ctx)))
	}
	direct, err := newClusterClient(backend, cluster)
	if err != nil {
		return fail(errors.Join(err, b.delete(ctx)))
	}
	return conformance.Member{ID: id, Name: multicluster.ClusterName(id), Client: direct}, nil
}

// UpdateMember labels the member's APIBinding: a change that is not a change of the member.
func (h *kcpHarness) UpdateMember(ctx context.Context, m conformance.Member) error {
	b, err := memberBinding(h.fleet, m.ID)
	if err != nil {
		return err
	}
	obj := &apisv1alpha1.APIBinding{}
	if err := backends[b.backend].Get(ctx, client.ObjectKey{Name: b.name}, obj); err != nil {
		return err
	}
	obj.Labels = map[string]string{"conformance.mcr.dev/touched": time.Now().Format("150405.000000")}
	return backends[b.backend].Update(ctx, obj)
}

// DeleteMember deletes the member's APIBinding (its last one), then forgets the logical cluster.
func (h *kcpHarness) DeleteMember(ctx context.Context, m conformance.Member) error {
	b, err := memberBinding(h.fleet, m.ID)
	if err != nil {
		return err
	}
	if err := b.delete(ctx); err != nil {
		return err
	}
	shardOf(b.backend).RemoveCluster(b.cluster)
	return h.fleet.Remove(ctx, m.ID)
}

// SetReady sets the Ready condition of the member's APIBinding.
func (h *kcpHarness) SetReady(ctx context.Context, m conformance.Member, ready bool) error {
	b, err := memberBinding(h.fleet, m.ID)
	if err != nil {
		return err
	}
	return b.setReadyErr(ctx, ready)
}

// TestConformance runs the mcr conformance suite against the provider with its default options
// (APIBindings, ready when their Ready condition is True) on a slice with both shards.
func TestConformance(t *testing.T) {
	host := envtest.StartForwarderForTest(t, fleet.Member("host"))
	linkA, urlA := forwardShard(t, shardA)
	linkB, urlB := forwardShard(t, shardB)
	harness := &kcpHarness{
		fleet: conformance.NewFleet(fleet.Member("east"), fleet.Member("west"), fleet.Member("north")),
		slice: newSlice(t, urlA, urlB),
		host:  host,
		links: []*envtest.Forwarder{host, linkA, linkB},
	}
	// Not CredentialRotation, nor UnresponsiveMembers and CredentialHygiene, which plant
	// kubeconfigs: logical clusters have no credentials of their own.
	conformance.Run(t, harness, mcrproviders.Options("kcp",
		conformance.CredentialRotation, conformance.UnresponsiveMembers, conformance.CredentialHygiene))
}
