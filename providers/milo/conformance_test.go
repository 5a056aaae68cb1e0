// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/conformance"
	"mcr.dev/conformance/mcrproviders"
	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/providers/milo"
	infrastructurev1alpha1 "mcr.dev/providers/milo/api/infrastructure/v1alpha1"
	resourcemanagerv1alpha1 "mcr.dev/providers/milo/api/resourcemanager/v1alpha1"
	"mcr.dev/providers/milo/internal/frontproxy"
)

// conformanceLabel marks the objects of the conformance members, which the providers under test
// select, so that they never engage the projects of the package's other tests.
const conformanceLabel = "conformance.mcr.dev/suite"

// miloHarness is the conformance harness of the Milo provider in one mode. A member is a project:
// a fleet member of its own (an apiserver and a ServiceAccount token), served by the front proxy
// as the project's control plane, and a Project (or ProjectControlPlane) on "milo" that is Ready
// once created. Readiness is toggled through the object's condition, as Milo does.
//
// It does not implement CredentialRotator: a Milo project has no credentials of its own. The
// provider reaches every project with its own host credentials, so there is nothing in the
// source of truth that could rotate per member; the proxy's credentials for the member are Milo's
// business, invisible to the provider. CredentialRotation is therefore not claimed.
//
// Each harness has a front proxy of its own, which reaches the Milo apiserver through a
// forwarder: StopSource takes the forwarder down, so that to the provider the Milo apiserver
// restarts (the proxy answers, but every request to Milo fails and open watches end, as in
// TestHostRestart), while the shared apiserver keeps serving the package's other tests.
type miloHarness struct {
	mode  milo.Mode
	fleet *conformance.Fleet
	grace time.Duration
	proxy *frontproxy.Proxy
	link  *envtest.Forwarder
}

var (
	_ conformance.Harness          = &miloHarness{}
	_ conformance.ReadinessToggler = &miloHarness{}
	_ conformance.SourceRestarter  = &miloHarness{}
	_ conformance.Resyncer         = &miloHarness{}
)

func (h *miloHarness) NewProvider(context.Context) (multicluster.Provider, error) {
	opts := milo.Options{
		Mode:               h.mode,
		Selector:           labels.SelectorFromSet(labels.Set{conformanceLabel: string(h.mode)}),
		UnreadyGracePeriod: h.grace,
		Options:            kit.Options{RetryMaxDelay: time.Second, ResyncPeriod: mcrproviders.Resync},
	}
	if h.mode == milo.ModeProjectControlPlane {
		// The in-cluster Service of each project does not exist here: the proxy's project
		// path stands in for it.
		opts.ControlPlaneHost = h.proxy.ControlPlaneURL
	}
	// The package's provider identity, through the harness's proxy.
	return milo.New(h.proxy.Config(provider.BearerToken), opts)
}

// StopSource makes the Milo apiserver unreachable for the provider: the forwarder between the
// proxy and the apiserver refuses connections and drops the open ones.
func (h *miloHarness) StopSource(context.Context) (func(context.Context) error, error) {
	h.link.Down()
	return func(context.Context) error { return h.link.Up() }, nil
}

func (h *miloHarness) ResyncPeriod() time.Duration { return mcrproviders.Resync }

func (h *miloHarness) CreateMember(ctx context.Context, name string) (conformance.Member, error) {
	fm, err := h.fleet.Add(ctx, name)
	if err != nil {
		return conformance.Member{}, err
	}
	// The control plane is served before Milo reports the project ready, as in Milo.
	err = h.proxy.Route(name, fm.Config())
	if err == nil {
		labels := map[string]string{conformanceLabel: string(h.mode)}
		if h.mode == milo.ModeProjectControlPlane {
			err = createControlPlane(ctx, name, labels)
		} else {
			err = createProject(ctx, name, labels)
		}
	}
	if err == nil {
		err = setReady(ctx, h.mode, name, true)
	}
	if err != nil {
		return conformance.Member{}, errors.Join(err, h.remove(ctx, name))
	}
	return fm.Member(milo.ClusterName(name)), nil
}

// UpdateMember labels the member's object: a change that is not a change of the project.
func (h *miloHarness) UpdateMember(ctx context.Context, m conformance.Member) error {
	obj := h.object(m.ID)
	if err := host.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return err
	}
	l := obj.GetLabels()
	l["conformance.mcr.dev/touched"] = time.Now().Format("150405.000000")
	obj.SetLabels(l)
	return host.Update(ctx, obj)
}

func (h *miloHarness) DeleteMember(ctx context.Context, m conformance.Member) error {
	return h.remove(ctx, m.ID)
}

// remove deletes the member's object, stops serving its control plane and frees its apiserver.
func (h *miloHarness) remove(ctx context.Context, name string) error {
	err := client.IgnoreNotFound(host.Delete(ctx, h.object(name)))
	h.proxy.Unroute(name)
	return errors.Join(err, h.fleet.Remove(ctx, name))
}

func (h *miloHarness) SetReady(ctx context.Context, m conformance.Member, ready bool) error {
	return setReady(ctx, h.mode, m.ID, ready)
}

func (h *miloHarness) object(name string) client.Object {
	if h.mode == milo.ModeProjectControlPlane {
		return &infrastructurev1alpha1.ProjectControlPlane{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	return &resourcemanagerv1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// The suite runs once per mode, in one Ginkgo suite (Ginkgo allows one per test binary).
// Project mode waits a one-second grace period before disengaging an unready project;
// ProjectControlPlane mode disengages at once. Both claim every feature but CredentialRotation
// (see miloHarness), UnresponsiveMembers and CredentialHygiene.
var _ = ginkgo.Describe("Project mode", func() {
	conformance.RegisterSpecs(
		func() conformance.Harness { return newHarness(milo.ModeProject, time.Second) },
		func() conformance.Options { return conformanceOptions(milo.ModeProject) })
})

var _ = ginkgo.Describe("ProjectControlPlane mode", func() {
	conformance.RegisterSpecs(
		func() conformance.Harness { return newHarness(milo.ModeProjectControlPlane, -1) },
		func() conformance.Options { return conformanceOptions(milo.ModeProjectControlPlane) })
})

// newHarness is called when the mode's specs start; its proxy and forwarder end with them.
func newHarness(mode milo.Mode, grace time.Duration) *miloHarness {
	miloServer := fleet.Member("milo")
	link, err := envtest.StartForwarder(strings.TrimPrefix(miloServer.Host(), "https://"))
	if err != nil {
		ginkgo.Fail(err.Error())
	}
	ginkgo.DeferCleanup(link.Close)
	hostConfig := rest.CopyConfig(miloServer.Config())
	hostConfig.Host = link.URL()
	px, err := frontproxy.Start(frontproxy.Options{Host: hostConfig})
	if err != nil {
		ginkgo.Fail(err.Error())
	}
	ginkgo.DeferCleanup(px.Close)
	return &miloHarness{
		mode:  mode,
		fleet: conformance.NewFleet(fleet.Member("alpha"), fleet.Member("beta"), fleet.Member("gamma")),
		grace: grace,
		proxy: px,
		link:  link,
	}
}

func conformanceOptions(mode milo.Mode) conformance.Options {
	// Not CredentialRotation, nor UnresponsiveMembers and CredentialHygiene, which plant
	// kubeconfigs: a Milo project has no credentials of its own.
	o := mcrproviders.Options("milo ("+string(mode)+" mode)",
		conformance.CredentialRotation, conformance.UnresponsiveMembers, conformance.CredentialHygiene)
	if path := os.Getenv(conformance.ReportEnv); path != "" {
		o.ReportPath = path + "." + string(mode)
	}
	return o
}

// TestConformance runs the mcr conformance suite against the provider in both modes.
func TestConformance(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "mcr.dev/providers/milo conformance")
}
