// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/milo"
	resourcemanagerv1alpha1 "mcr.dev/providers/milo/api/resourcemanager/v1alpha1"
)

// withUserInfo returns u with user info user:password.
func withUserInfo(u, user, password string) string {
	return strings.Replace(u, "://", "://"+user+":"+password+"@", 1)
}

// roleSelector selects the running test's objects that have the label role=value, so that
// several providers of one test engage different projects.
func roleSelector(t *testing.T, value string) labels.Selector {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: map[string]string{testLabel: testID(t), "role": value}})
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

// readyProject creates a ready Project of the running test with the label role=value, whose
// control plane is served by member.
func readyProject(t *testing.T, name, role, member string) {
	t.Helper()
	route(t, name, member)
	newProject(t, name, map[string]string{"role": role})
	setReadyT(t, milo.ModeProject, name, true)
}

// touchProject changes a label of a Project, so that the provider syncs it again.
func touchProject(t *testing.T, name, value string) {
	t.Helper()
	providertest.Eventually(t, waitTimeout, "labeling Project "+name, func() error {
		p := &resourcemanagerv1alpha1.Project{}
		if err := host.Get(t.Context(), client.ObjectKey{Name: name}, p); err != nil {
			return err
		}
		p.Labels["touched"] = value
		return host.Update(t.Context(), p)
	})
}

// TestNeverReportsCredentials plants markers in every credential the provider reads: the user
// info and query of the host config's and BaseConfig's Host, the user info and query of the
// control-plane URLs ControlPlaneHost returns, and the bearer token and basic-auth password it
// presents to every project's control plane and to the host. It drives projects through engage,
// refusal, rotation of a control-plane URL and removal, and then scans every log line (the
// providers' and the process-wide ones), every Event on the host, every error the providers
// returned and their metrics for the markers.
func TestNeverReportsCredentials(t *testing.T) {
	m := providertest.Marker
	baseUser, basePass, baseQuery := m("baseuser"), m("basepassword"), m("basequery")
	cpUser, cpPass, cpQuery := m("cpuser"), m("cppassword"), m("cpquery")
	token, password, hostToken := m("projecttoken"), m("projectpassword"), m("hosttoken")
	leaks := providertest.NewLeakCheck(baseUser, basePass, baseQuery, cpUser, cpPass, cpQuery, token, password, hostToken)

	// A host or BaseConfig URL with credentials is refused by New, without quoting them.
	for _, h := range []string{withUserInfo(proxy.URL(), baseUser, basePass), proxy.URL() + "/?access_token=" + baseQuery} {
		marked := rest.CopyConfig(provider)
		marked.Host = h
		_, err := milo.New(provider, milo.Options{BaseConfig: marked})
		if err == nil || !strings.Contains(err.Error(), "Host of BaseConfig is refused") {
			t.Errorf("milo.New with credentials in BaseConfig's Host: %v, want it refused", err)
		}
		leaks.ScanError("milo.New", err)
		_, err = milo.New(marked, milo.Options{})
		if err == nil || !strings.Contains(err.Error(), "Host of the host config is refused") {
			t.Errorf("milo.New with credentials in the host config's Host: %v, want it refused", err)
		}
		leaks.ScanError("milo.New", err)
	}

	// Control-plane URLs with credentials: refused for their project only.
	good, userInfo, query := uniqueName("leak-good"), uniqueName("leak-userinfo"), uniqueName("leak-query")
	var mu sync.Mutex
	hosts := map[string]string{
		good:     proxy.ControlPlaneURL(good),
		userInfo: withUserInfo(proxy.ControlPlaneURL(userInfo), cpUser, cpPass),
		query:    proxy.ControlPlaneURL(query) + "?access_token=" + cpQuery,
	}
	setHost := func(project, h string) {
		mu.Lock()
		defer mu.Unlock()
		hosts[project] = h
	}
	for _, name := range []string{good, userInfo, query} {
		readyProject(t, name, "urls", "alpha")
	}
	urls := start(t, milo.Options{Selector: roleSelector(t, "urls"), ControlPlaneHost: func(project string) string {
		mu.Lock()
		defer mu.Unlock()
		return hosts[project]
	}})
	e := urls.waitEngaged(t, good)
	waitEvent(t, "Project", userInfo, kit.ReasonClusterSetupFailed, "user info")
	waitEvent(t, "Project", query, kit.ReasonClusterSetupFailed, "query")

	// The token and the password the provider presents to the control planes, refused there.
	tokenProject, passwordProject := uniqueName("leak-token"), uniqueName("leak-password")
	readyProject(t, tokenProject, "token", "beta")
	readyProject(t, passwordProject, "password", "beta")
	withToken := proxy.Config(token)
	withPassword := proxy.Config("")
	withPassword.Username, withPassword.Password = "milo", password
	tokens := start(t, milo.Options{Selector: roleSelector(t, "token"), BaseConfig: withToken})
	passwords := start(t, milo.Options{Selector: roleSelector(t, "password"), BaseConfig: withPassword})
	waitEvent(t, "Project", tokenProject, kit.ReasonUnauthorized)
	waitEvent(t, "Project", passwordProject, kit.ReasonUnauthorized)

	// Rotation: the engaged project's URL gets credentials (refused, it stays engaged with
	// the config that works), then loses them again.
	setHost(good, withUserInfo(proxy.ControlPlaneURL(good), cpUser, cpPass))
	touchProject(t, good, "1")
	waitEvent(t, "Project", good, kit.ReasonClusterSetupFailed, "user info")
	if !e.Alive() {
		t.Error("the engaged project was disengaged when its new URL was refused")
	}
	setHost(good, proxy.ControlPlaneURL(good))
	touchProject(t, good, "2")
	urls.waitLog(t, good, "problem resolved")

	// Errors of the provider's API.
	_, err := urls.provider.Get(t.Context(), "not-a-member")
	leaks.ScanError("Get", err)

	// Removal.
	if err := host.Delete(t.Context(), &resourcemanagerv1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: good}}); err != nil {
		t.Fatal(err)
	}
	urls.waitDisengaged(t, good, e)

	// A host that refuses the token: Start fails.
	hostLogs := &providertest.LogBuffer{}
	p, err := milo.New(proxy.Config(hostToken), milo.Options{Options: kit.Options{CacheSyncTimeout: 5 * time.Second, Logger: hostLogs.Logger()}})
	if err != nil {
		t.Fatal(err)
	}
	leaks.ScanError("Start", providertest.StartFails(t, p, waitTimeout))

	leaks.Report(t, providertest.LeakReport{
		Logs:   []*providertest.LogBuffer{urls.logs, tokens.logs, passwords.logs, hostLogs},
		Events: []*rest.Config{fleet.Member("milo").Config()},
	})
}

// TestDottedProjectName checks that in ModeProjectControlPlane a project whose name has a dot,
// which would make an in-cluster Service host that names another Service or a host outside the
// cluster, is refused with a clear error on its own ProjectControlPlane, and is never dialed,
// while the other projects are engaged.
func TestDottedProjectName(t *testing.T) {
	for _, name := range []string{"x.svc.example.com", "a.b"} {
		if err := milo.CheckServiceProject(name); err == nil || !strings.Contains(err.Error(), "namespace name") {
			t.Errorf("CheckServiceProject(%q) = %v, want an error", name, err)
		}
	}
	if err := milo.CheckServiceProject("shop"); err != nil {
		t.Errorf("CheckServiceProject(shop) = %v", err)
	}

	dotted := uniqueName("dotted") + ".svc.example.com"
	plain := uniqueName("plain")
	for _, name := range []string{dotted, plain} {
		route(t, name, "gamma")
		newControlPlane(t, name)
		setReadyT(t, milo.ModeProjectControlPlane, name, true)
	}
	var mu sync.Mutex
	var asked []string
	// The default ControlPlaneHost, which checks the name, with the proxy's URL in place of the
	// in-cluster Service, which the test cannot resolve.
	restore := milo.SetServiceHost(func(project string) string {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, project)
		return proxy.ControlPlaneURL(project)
	})
	s := start(t, milo.Options{Mode: milo.ModeProjectControlPlane})
	restore()
	s.waitEngaged(t, plain)
	note := waitEvent(t, "ProjectControlPlane", dotted, kit.ReasonClusterSetupFailed, "no in-cluster Service host")
	t.Logf("refused: %s", note)
	s.waitLog(t, dotted, "Project cannot be engaged", "namespace name")
	if n := s.rec.Count(clusterName(dotted)); n != 0 {
		t.Errorf("the dotted project was engaged %d times", n)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range asked {
		if p == dotted {
			t.Error("the host of the dotted project was built")
		}
	}
}
