// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/milo"
	resourcemanagerv1alpha1 "mcr.dev/providers/milo/api/resourcemanager/v1alpha1"
)

// requireSeesUpdates checks that the cache of an engaged cluster watches the member behind it:
// a ConfigMap written to the member directly shows up in the cache, and so does a later change
// of it, which only a working watch (streamed through the proxy) delivers.
func requireSeesUpdates(t *testing.T, cl cluster.Cluster, member, name string) {
	t.Helper()
	direct, err := client.New(fleet.Member(member).Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: name},
		Data:       map[string]string{"v": "1"},
	}
	if err := direct.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = direct.Delete(context.Background(), cm) })
	seen := func(want string) func() error {
		return func() error {
			got := &corev1.ConfigMap{}
			if err := cl.GetCache().Get(t.Context(), client.ObjectKeyFromObject(cm), got); err != nil {
				return err
			}
			if got.Data["v"] != want {
				return fmt.Errorf("cache has v=%q, want %q", got.Data["v"], want)
			}
			return nil
		}
	}
	providertest.Eventually(t, waitTimeout, "the cluster's cache lists the member's ConfigMap", seen("1"))
	cm.Data["v"] = "2"
	if err := direct.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	providertest.Eventually(t, waitTimeout, "the cluster's cache sees the change through its watch", seen("2"))
}

// TestProjectMode engages a Project once it is Ready, through the Milo apiserver's project
// control-plane path, with a cache that watches the project's control plane through it.
func TestProjectMode(t *testing.T) {
	name := uniqueName("proj")
	route(t, name, "alpha")
	newProject(t, name, nil)
	s := start(t, milo.Options{})

	s.waitLog(t, name, "Cluster not engaged: the Project is not ready")
	if n := s.rec.Count(clusterName(name)); n != 0 {
		t.Fatalf("a Project that is not Ready was engaged %d times", n)
	}

	setReadyT(t, milo.ModeProject, name, true)
	e := s.waitEngaged(t, name)
	if got, want := e.Cluster.GetConfig().Host, proxy.ControlPlaneURL(name); got != want {
		t.Errorf("engaged cluster talks to %s, want %s", got, want)
	}
	if got := providertest.BearerTokenOf(t, e.Cluster.GetConfig()); got != provider.BearerToken {
		t.Error("engaged cluster does not use the provider's own credentials")
	}
	requireSeesUpdates(t, e.Cluster, "alpha", "seen-"+name)
	if proxy.Requests(name) == 0 {
		t.Error("the proxy forwarded no request of the project")
	}
	waitEvent(t, "Project", name, kit.ReasonClusterEngaged, proxy.ControlPlaneURL(name))
	if s.logs.Contains(provider.BearerToken) {
		t.Error("the provider logged its token")
	}

	if err := host.Delete(t.Context(), &resourcemanagerv1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	s.waitDisengaged(t, name, e)
	s.waitLog(t, name, "Disengaged cluster: the Project is gone")
}

// TestProjectControlPlaneMode engages a ProjectControlPlane once ControlPlaneReady is True, at
// the host Options.ControlPlaneHost returns (here the proxy's project path instead of the
// in-cluster Service), and disengages it when it is deleted.
func TestProjectControlPlaneMode(t *testing.T) {
	name := uniqueName("pcp")
	route(t, name, "beta")
	newControlPlane(t, name)
	s := start(t, milo.Options{
		Mode:             milo.ModeProjectControlPlane,
		ControlPlaneHost: proxy.ControlPlaneURL,
	})
	s.waitLog(t, name, "Cluster not engaged: the ProjectControlPlane is not ready")
	if n := s.rec.Count(clusterName(name)); n != 0 {
		t.Fatalf("a ProjectControlPlane that is not ready was engaged %d times", n)
	}

	setReadyT(t, milo.ModeProjectControlPlane, name, true)
	e := s.waitEngaged(t, name)
	if got, want := e.Cluster.GetConfig().Host, proxy.ControlPlaneURL(name); got != want {
		t.Errorf("engaged cluster talks to %s, want %s", got, want)
	}
	requireSeesUpdates(t, e.Cluster, "beta", "seen-"+name)
	waitEvent(t, "ProjectControlPlane", name, kit.ReasonClusterEngaged)

	if err := host.Delete(t.Context(), &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "infrastructure.miloapis.com/v1alpha1", Kind: "ProjectControlPlane"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}); err != nil {
		t.Fatal(err)
	}
	s.waitDisengaged(t, name, e)
}

// TestReadinessGracePeriod walks a project through ready → unready → (grace period) →
// disengaged → ready → engaged again, and checks that a project ready again within the grace
// period keeps its cluster.
func TestReadinessGracePeriod(t *testing.T) {
	t.Run("ReadyAgainWithinGrace", func(t *testing.T) {
		name := uniqueName("grace-long")
		route(t, name, "alpha")
		newProject(t, name, nil)
		setReadyT(t, milo.ModeProject, name, true)
		s := start(t, milo.Options{UnreadyGracePeriod: time.Hour})
		e := s.waitEngaged(t, name)

		setReadyT(t, milo.ModeProject, name, false)
		s.waitLog(t, name, "Project is not ready; its cluster stays engaged for the grace period", `"gracePeriod"="1h0m0s"`)
		waitEvent(t, "Project", name, milo.ReasonProjectUnready, "1h0m0s")
		if !e.Alive() {
			t.Fatal("the cluster was disengaged although the grace period has not ended")
		}
		setReadyT(t, milo.ModeProject, name, true)
		s.waitLog(t, name, "ready again within the grace period")
		if latest, n := s.rec.Latest(clusterName(name)); latest != e || n != 1 || !e.Alive() {
			t.Fatalf("the project was re-engaged or disengaged (engagements: %d) although it was ready again within the grace period", n)
		}
	})

	t.Run("DisengagedAfterGraceAndReengaged", func(t *testing.T) {
		const grace = 2 * time.Second
		name := uniqueName("grace-short")
		route(t, name, "beta")
		newProject(t, name, nil)
		setReadyT(t, milo.ModeProject, name, true)
		s := start(t, milo.Options{UnreadyGracePeriod: grace})
		first := s.waitEngaged(t, name)

		unready := time.Now()
		setReadyT(t, milo.ModeProject, name, false)
		s.waitDisengaged(t, name, first)
		// A lower bound only: the provider may take longer on a loaded machine, never less.
		if waited := time.Since(unready); waited < grace {
			t.Errorf("disengaged %s after the Project became unready, before the grace period of %s ended", waited, grace)
		}
		waitEvent(t, "Project", name, kit.ReasonClusterDisengaged, "grace period")

		setReadyT(t, milo.ModeProject, name, true)
		var again *providertest.Engagement
		providertest.Eventually(t, waitTimeout, "engaged again once ready", func() error {
			var n int
			again, n = s.rec.Latest(clusterName(name))
			if again == first || !again.Alive() || n != 2 {
				return fmt.Errorf("not engaged again (engagements: %d)", n)
			}
			return nil
		})
		if cl, err := s.provider.Get(t.Context(), clusterName(name)); err != nil || cl != again.Cluster {
			t.Fatalf("Get after re-engagement: %v, %v", cl, err)
		}
		requireSeesUpdates(t, again.Cluster, "beta", "again-"+name)
	})

	t.Run("NegativeGraceDisengagesAtOnce", func(t *testing.T) {
		name := uniqueName("grace-none")
		route(t, name, "gamma")
		newProject(t, name, nil)
		setReadyT(t, milo.ModeProject, name, true)
		s := start(t, milo.Options{UnreadyGracePeriod: -1})
		e := s.waitEngaged(t, name)
		setReadyT(t, milo.ModeProject, name, false)
		s.waitDisengaged(t, name, e)
		if line, err := s.logs.Find(`"cluster"="`+name+`"`, "stays engaged for the grace period"); err == nil {
			t.Errorf("a negative grace period still waited: %s", line)
		}
	})
}

// TestSelector engages only Projects whose labels match Options.Selector and disengages one
// whose labels stop matching.
func TestSelector(t *testing.T) {
	name := uniqueName("sel")
	route(t, name, "gamma")
	newProject(t, name, nil)
	setReadyT(t, milo.ModeProject, name, true)
	s := start(t, milo.Options{Selector: labels.SelectorFromSet(labels.Set{testLabel: testID(t), "env": "prod"})})
	s.waitLog(t, name, "Cluster not engaged: the Project is not selected")
	if n := s.rec.Count(clusterName(name)); n != 0 {
		t.Fatalf("an unselected Project was engaged %d times", n)
	}

	label := func(v string) {
		t.Helper()
		providertest.Eventually(t, waitTimeout, "labeling the Project", func() error {
			p := &resourcemanagerv1alpha1.Project{}
			if err := host.Get(t.Context(), client.ObjectKey{Name: name}, p); err != nil {
				return err
			}
			if v == "" {
				delete(p.Labels, "env")
			} else {
				p.Labels["env"] = v
			}
			return host.Update(t.Context(), p)
		})
	}
	label("prod")
	e := s.waitEngaged(t, name)
	label("")
	s.waitDisengaged(t, name, e)
	waitEvent(t, "Project", name, kit.ReasonClusterDisengaged, "not selected")
}

// TestBrokenProjectDoesNotStopOthers has ready projects whose control plane does not answer or
// is not served, and one that answers: the healthy one is engaged, the broken one gets a Warning Event, an error log
// line with its cluster name and a count in the metrics, and it is engaged once its control plane
// answers. In ProjectControlPlane mode, a project left at the default in-cluster Service host
// (which does not resolve here) is reported the same way.
func TestBrokenProjectDoesNotStopOthers(t *testing.T) {
	t.Run("Project", func(t *testing.T) {
		// broken is served by Milo but its control plane does not answer (502); unserved is not
		// served at all (404), which the path-routed access check also takes for unreachable.
		broken, unserved, healthy := uniqueName("broken"), uniqueName("unserved"), uniqueName("healthy")
		route(t, healthy, "alpha")
		routeNowhere(t, broken)
		for _, name := range []string{broken, unserved, healthy} {
			newProject(t, name, nil)
			setReadyT(t, milo.ModeProject, name, true)
		}
		before := testutil.ToFloat64(milo.Errors.WithLabelValues(kit.ReasonClusterUnreachable))
		s := start(t, milo.Options{})
		s.waitEngaged(t, healthy)

		// The note names no address: the kit's access check never repeats a member's URL.
		note := waitEvent(t, "Project", broken, kit.ReasonClusterUnreachable, "did not answer")
		t.Logf("Event note: %s", note)
		s.waitLog(t, broken, "Project cannot be engaged", `"reason"="ClusterUnreachable"`)
		if after := testutil.ToFloat64(milo.Errors.WithLabelValues(kit.ReasonClusterUnreachable)); after <= before {
			t.Error("mcr_milo_provider_errors_total{reason=ClusterUnreachable} did not grow")
		}
		if got := testutil.ToFloat64(milo.BrokenClusters); got < 1 {
			t.Errorf("mcr_milo_provider_broken_projects = %v, want at least 1", got)
		}
		if s.rec.Count(clusterName(broken)) != 0 {
			t.Error("the broken project was engaged")
		}
		waitEvent(t, "Project", unserved, kit.ReasonClusterUnreachable, "404")
		if s.rec.Count(clusterName(unserved)) != 0 {
			t.Error("a project whose control plane Milo does not serve (404) was engaged")
		}

		// The control plane answers: the retries engage it.
		route(t, broken, "gamma")
		s.waitEngaged(t, broken)
		s.waitLog(t, broken, "Project problem resolved")
		if s.logs.Contains(provider.BearerToken) {
			t.Error("the provider logged its token")
		}
	})

	t.Run("ProjectControlPlane", func(t *testing.T) {
		lost, healthy := uniqueName("lost"), uniqueName("healthy")
		route(t, healthy, "beta")
		for _, name := range []string{lost, healthy} {
			newControlPlane(t, name)
			setReadyT(t, milo.ModeProjectControlPlane, name, true)
		}
		s := start(t, milo.Options{
			Mode: milo.ModeProjectControlPlane,
			ControlPlaneHost: func(project string) string {
				if project == lost {
					return milo.ServiceHost(project) // the default, not resolvable here
				}
				return proxy.ControlPlaneURL(project)
			},
			Options: kit.Options{CacheSyncTimeout: 5 * time.Second},
		})
		s.waitEngaged(t, healthy)
		// The resolver's error names the Service's host.
		waitEvent(t, "ProjectControlPlane", lost, kit.ReasonClusterUnreachable,
			"milo-apiserver.project-"+lost+".svc.cluster.local")
		s.waitLog(t, lost, "Project cannot be engaged")
	})
}

// TestNewForHost reads ProjectControlPlanes through a host cluster the caller runs, as a manager's
// local cluster would be shared, and engages a ready one.
func TestNewForHost(t *testing.T) {
	name := uniqueName("shared")
	route(t, name, "gamma")
	newControlPlane(t, name)
	setReadyT(t, milo.ModeProjectControlPlane, name, true)

	s, err := milo.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	hostCluster, err := cluster.New(provider, func(o *cluster.Options) { o.Scheme = s })
	if err != nil {
		t.Fatal(err)
	}
	providertest.RunInBackground(t, "host cluster", waitTimeout, hostCluster.Start)

	logs := &logBuffer{}
	p, err := milo.NewForHost(hostCluster, milo.Options{
		Mode:             milo.ModeProjectControlPlane,
		Selector:         labels.SelectorFromSet(labels.Set{testLabel: testID(t)}),
		ControlPlaneHost: proxy.ControlPlaneURL,
		Options:          kit.Options{Logger: logs.Logger()},
	})
	if err != nil {
		t.Fatal(err)
	}
	run := providertest.Start(t, p, waitTimeout)
	e := run.Recorder.WaitEngaged(t, p, clusterName(name), waitTimeout)
	if got := providertest.BearerTokenOf(t, e.Cluster.GetConfig()); got != provider.BearerToken {
		t.Error("with NewForHost, BaseConfig does not default to the host cluster's config")
	}
	requireSeesUpdates(t, e.Cluster, "gamma", "shared-"+name)
}

// TestStartFailsWithoutCRD: a host without the CRD of the mode makes Start fail with a message
// that says so, within CacheSyncTimeout, instead of hanging.
func TestStartFailsWithoutCRD(t *testing.T) {
	p, err := milo.New(fleet.Member("alpha").Config(), milo.Options{
		Mode:    milo.ModeProjectControlPlane,
		Options: kit.Options{CacheSyncTimeout: 3 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	err = p.Start(ctx, providertest.NewRecorder())
	if err == nil || !strings.Contains(err.Error(), "CRD installed") {
		t.Fatalf("Start = %v, want an error that asks whether the CRD is installed", err)
	}
}

// TestNew checks the options New refuses, and that Get knows no cluster before Start.
func TestNew(t *testing.T) {
	if _, err := milo.New(nil, milo.Options{}); err == nil {
		t.Error("New(nil) succeeded")
	}
	if _, err := milo.New(provider, milo.Options{Mode: "Organization"}); err == nil || !strings.Contains(err.Error(), "unknown Mode") {
		t.Errorf("New with an unknown Mode = %v, want an error naming it", err)
	}
	p, err := milo.New(provider, milo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode() != milo.ModeProject {
		t.Errorf("default Mode = %q, want %q", p.Mode(), milo.ModeProject)
	}
	if _, err := p.Get(t.Context(), "nope"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Errorf("Get before Start = %v, want ErrClusterNotFound", err)
	}
}
