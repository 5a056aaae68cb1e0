// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package restmapper_test

import (
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/envtest"
	"mcr.dev/core/internal/credswap"
	"mcr.dev/core/restmapper"
)

// TestDefaultsShareMappersPerEndpoint: clusters built under the zero clusters.Defaults, as the
// provider kit builds every member, share a mapper per endpoint when they authenticate with
// tokens (refreshed in place or not), keep different client certificates apart, and keep their
// own with OwnRESTMappers or a provider's Own option.
func TestDefaultsShareMappersPerEndpoint(t *testing.T) {
	a := fleet.Member("a")
	build := func(cfg *rest.Config, d clusters.Defaults, more ...cluster.Option) cluster.Cluster {
		t.Helper()
		cl, err := cluster.New(cfg, append([]cluster.Option{d.ClusterOption()}, more...)...)
		if err != nil {
			t.Fatalf("cluster.New: %v", err)
		}
		return cl
	}
	tenantOne, tenantTwo := tenantConfig(t, a, "default-one"), tenantConfig(t, a, "default-two")
	admin := a.Config()
	otherCert := a.Config()
	otherCert.CertData, otherCert.KeyData = tenantCertificate(t)

	one := build(tenantOne, clusters.Defaults{})
	two := build(tenantTwo, clusters.Defaults{})
	if !restmapper.SameMapper(one.GetRESTMapper(), two.GetRESTMapper()) {
		t.Error("two token-authenticated clusters of one endpoint do not share a mapper by default")
	}
	if m, err := two.GetRESTMapper().RESTMapping(deployments.GroupKind(), deployments.Version); err != nil || m.Resource.Resource != "deployments" {
		t.Errorf("mapping Deployment through the default mapper: %v, %v", m, err)
	}
	if other := build(fleet.Member("b").Config(), clusters.Defaults{}); restmapper.SameMapper(one.GetRESTMapper(), other.GetRESTMapper()) {
		t.Error("clusters of two apiservers share a mapper")
	}

	// The kit's config for a member whose credentials it refreshes in place: a Transport of
	// its own, which says what endpoint it reaches.
	inPlace := func(cfg *rest.Config) *rest.Config {
		t.Helper()
		swappable, _, err := credswap.Config(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return swappable
	}
	refreshed := build(inPlace(tenantTwo), clusters.Defaults{})
	if !restmapper.SameMapper(one.GetRESTMapper(), refreshed.GetRESTMapper()) {
		t.Error("a member whose token is refreshed in place does not share the endpoint's mapper")
	}
	if m, err := refreshed.GetRESTMapper().RESTMapping(deployments.GroupKind(), deployments.Version); err != nil || m.Resource.Resource != "deployments" {
		t.Errorf("mapping Deployment through the mapper of a member refreshed in place: %v, %v", m, err)
	}

	adminOne := build(admin, clusters.Defaults{})
	adminTwo := build(a.Config(), clusters.Defaults{})
	if !restmapper.SameMapper(adminOne.GetRESTMapper(), adminTwo.GetRESTMapper()) {
		t.Error("two clusters with one client certificate do not share a mapper by default")
	}
	if byCert := build(otherCert, clusters.Defaults{}); restmapper.SameMapper(adminOne.GetRESTMapper(), byCert.GetRESTMapper()) {
		t.Error("clusters with different client certificates share a mapper by default")
	}
	if !restmapper.SameMapper(adminOne.GetRESTMapper(), build(inPlace(a.Config()), clusters.Defaults{}).GetRESTMapper()) {
		t.Error("a member whose certificate is refreshed in place does not share the mapper of its certificate")
	}
	if restmapper.SameMapper(adminOne.GetRESTMapper(), build(inPlace(otherCert), clusters.Defaults{}).GetRESTMapper()) {
		t.Error("a member refreshed in place shares the mapper of another client certificate")
	}
	if restmapper.SameMapper(one.GetRESTMapper(), adminOne.GetRESTMapper()) {
		t.Error("a token-authenticated and a certificate-authenticated cluster share a mapper by default")
	}

	for name, cl := range map[string]cluster.Cluster{
		"OwnRESTMappers": build(tenantOne, clusters.Defaults{OwnRESTMappers: true}),
		"Own option":     build(tenantOne, clusters.Defaults{}, restmapper.Own),
	} {
		if restmapper.SameMapper(one.GetRESTMapper(), cl.GetRESTMapper()) {
			t.Errorf("%s: the cluster shares the default mapper", name)
		}
		if m, err := cl.GetRESTMapper().RESTMapping(configMaps.GroupKind(), configMaps.Version); err != nil || m.Resource.Resource != "configmaps" {
			t.Errorf("%s: mapping ConfigMap through its own mapper: %v, %v", name, m, err)
		}
	}

	pool := restmapper.NewPool(restmapper.Options{})
	if byCert := build(otherCert, clusters.Defaults{RESTMappers: pool}); !restmapper.SameMapper(build(admin, clusters.Defaults{RESTMappers: pool}).GetRESTMapper(), byCert.GetRESTMapper()) {
		t.Error("a Pool without SeparateClientCertificates keeps client certificates apart")
	}
}

// tenantCertificate returns a client certificate and key of another identity. No server trusts
// it: the clusters built with it only get a mapper, which discovers on first use.
func tenantCertificate(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	certPEM, keyPEM, err := envtest.SelfSignedClientCertificate("tenant")
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, keyPEM
}
