// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package coreproviders_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/conformance"
	"mcr.dev/conformance/internal/namespaceharness"
	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/namespace"
	"mcr.dev/core/providers/nop"
)

// TestCoreProviders runs the conformance suite, through RegisterSpecs, against every utility
// provider of mcr.dev/core in one Ginkgo suite sharing one fleet.
func TestCoreProviders(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "conformance of mcr.dev/core's providers")
}

var (
	fleet   *envtest.Fleet
	members *conformance.Fleet
)

var _ = ginkgo.BeforeSuite(func(ctx ginkgo.SpecContext) {
	var err error
	fleet, err = envtest.Start(ctx, envtest.Options{Members: []string{"host", "ns-host", "s0", "s1", "s2"}})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	members = conformance.NewFleet(fleet.Member("s0"), fleet.Member("s1"), fleet.Member("s2"))
	ginkgo.DeferCleanup(fleet.Stop)
}, ginkgo.NodeTimeout(5*time.Minute))

// options are the suite's defaults except a shorter stability window: these providers are
// run on every `make test`, and a correct provider passes with any window.
func options(features ...conformance.Feature) conformance.Options {
	return conformance.Options{
		Features:       features,
		Timeouts:       conformance.Timeouts{Stable: 2 * time.Second},
		ScaleMembers:   24,
		Implementation: conformance.Implementation{Organization: "mcr", URL: "https://mcr.dev"},
	}
}

func named(o conformance.Options, project string) conformance.Options {
	o.Implementation.Project = project
	return o
}

var _ = ginkgo.Describe("namespace provider", func() {
	conformance.RegisterSpecs(func() conformance.Harness {
		h, err := namespaceharness.New(fleet.Member("ns-host").Config(), func(host cluster.Cluster) multicluster.Provider {
			return namespace.New(host, namespace.Options{})
		})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		return h
	}, func() conformance.Options {
		return named(options(conformance.Scale), "mcr.dev/core/providers/namespace")
	})
})

var _ = ginkgo.Describe("clusters provider", func() {
	conformance.RegisterSpecs(func() conformance.Harness { return newClustersHarness(members) }, func() conformance.Options {
		return named(options(conformance.CredentialRotation, conformance.Scale), "mcr.dev/core/providers/clusters")
	})
})

var _ = ginkgo.Describe("clusters provider under a manager", func() {
	conformance.RegisterSpecs(func() conformance.Harness { return newClustersHarness(members) }, func() conformance.Options {
		o := named(options(conformance.CredentialRotation), "mcr.dev/core/providers/clusters")
		o.Mode, o.ManagerConfig = conformance.ModeManager, fleet.Member("host").Config()
		return o
	})
})

var _ = ginkgo.Describe("multi provider", func() {
	conformance.RegisterSpecs(func() conformance.Harness { return newMultiHarness(members) }, func() conformance.Options {
		return named(options(conformance.CredentialRotation, conformance.Scale), "mcr.dev/core/providers/multi")
	})
})

var _ = ginkgo.Describe("single provider", func() {
	conformance.RegisterSpecs(func() conformance.Harness { return newSingleHarness(members) }, func() conformance.Options {
		return named(options(), "mcr.dev/core/providers/single")
	})
})

// nop has no members, so the suite's member tests do not apply; these are the two rules that
// do, NotFoundForUnknown and CleanStop, checked directly.
var _ = ginkgo.Describe("nop provider", func() {
	ginkgo.It("NotFoundForUnknown: Get returns ErrClusterNotFound before and after Start, never (nil, nil)", func(ctx ginkgo.SpecContext) {
		p := nop.New()
		expectNotFound := func() {
			cl, err := p.Get(ctx, "anything")
			gomega.Expect(cl).To(gomega.BeNil())
			gomega.Expect(errors.Is(err, multicluster.ErrClusterNotFound)).To(gomega.BeTrue(), "Get returned %v", err)
		}
		expectNotFound()
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- p.Start(runCtx, nil) }()
		expectNotFound()
		cancel()
		gomega.Eventually(done).WithTimeout(conformance.DefaultStopTimeout).Should(gomega.Receive(gomega.BeNil()))
	})
	ginkgo.It("CleanStop: Start returns nil once its context ends", func(ctx ginkgo.SpecContext) {
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- nop.New().Start(runCtx, nil) }()
		gomega.Consistently(done).WithTimeout(time.Second).ShouldNot(gomega.Receive(), "Start must block while its context is alive")
		cancel()
		gomega.Eventually(done).WithTimeout(conformance.DefaultStopTimeout).Should(gomega.Receive(gomega.BeNil()))
	})
})
