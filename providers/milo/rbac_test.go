// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/milo"
)

// TestEachPermissionIsNeeded runs the provider, in both modes, as a ServiceAccount of the host
// with exactly the rules of config/rbac.yaml, and with each permission of it taken away. With
// the whole manifest each mode engages a ready project, disengages it when it is no longer
// ready and engages it again, and records its Events, the second ClusterEngaged as a series of
// the first; without any one permission something of that fails in one mode, or a Forbidden
// error is logged for the ServiceAccount.
func TestEachPermissionIsNeeded(t *testing.T) {
	rules, err := providertest.ManifestRules("config/rbac.yaml", "ClusterRole")
	if err != nil {
		t.Fatal(err)
	}
	cases := append([]providertest.RuleRemoval{{Removed: "none", Rules: rules}}, providertest.EachPermissionRemoved(rules)...)
	for i, c := range cases {
		t.Run("without "+c.Removed, func(t *testing.T) {
			t.Parallel()
			whole := i == 0
			var mu sync.Mutex
			var failures []string
			// Both modes run as parallel subtests; their failures are judged together once
			// both are done.
			t.Cleanup(func() {
				switch {
				case whole && len(failures) > 0:
					t.Errorf("with the whole manifest: %s", strings.Join(failures, "; "))
				case !whole && len(failures) == 0:
					t.Errorf("nothing failed without %s: the permission is not needed", c.Removed)
				case !whole:
					t.Logf("without %s: %s", c.Removed, strings.Join(failures, "; "))
				}
			})
			for _, mode := range []milo.Mode{milo.ModeProject, milo.ModeProjectControlPlane} {
				t.Run(string(mode), func(t *testing.T) {
					t.Parallel()
					got := runModeWithRules(t, fmt.Sprintf("milo-rbac-%d-%s", i, strings.ToLower(string(mode))), mode, c.Rules, whole)
					mu.Lock()
					defer mu.Unlock()
					for _, f := range got {
						failures = append(failures, string(mode)+": "+f)
					}
				})
			}
		})
	}
}

// runModeWithRules runs the provider in mode as a ServiceAccount with rules and returns what
// did not work. Each step waits at most 15 seconds (a minute with the whole manifest, when
// whole); the run stops at the first step that fails.
func runModeWithRules(t *testing.T, namespace string, mode milo.Mode, rules []rbacv1.PolicyRule, whole bool) []string {
	t.Helper()
	ctx := t.Context()
	window := 15 * time.Second
	if whole {
		window = waitTimeout
	}
	kubeconfig, err := fleet.Member("milo").ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{
		Namespace:    namespace,
		Name:         "provider",
		ClusterRules: rules,
	})
	if err != nil {
		t.Fatal(err)
	}
	sa, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + namespace + ":provider"

	// The project's control plane is first not served (404), then served from where nothing
	// answers (502): two Warnings of one reason on the unchanged object, the second a series of
	// the first (a patch). Then it is served and the project engaged, disengaged when it is no
	// longer ready (seen through the watch) and engaged again.
	name := uniqueName("rbac")
	t.Cleanup(func() { proxy.Unroute(name) })
	labels := map[string]string{"test.mcr.dev/rbac": namespace}
	kind := "Project"
	if mode == milo.ModeProjectControlPlane {
		kind = "ProjectControlPlane"
		err = createControlPlane(ctx, name, labels)
	} else {
		err = createProject(ctx, name, labels)
	}
	if err != nil {
		t.Fatal(err)
	}
	setReadyT(t, mode, name, true)

	logs := &providertest.LogBuffer{}
	sel, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: labels})
	if err != nil {
		t.Fatal(err)
	}
	p, err := milo.New(proxy.Config(sa.BearerToken), milo.Options{
		Mode:               mode,
		Selector:           sel,
		ControlPlaneHost:   proxy.ControlPlaneURL,
		UnreadyGracePeriod: -1,
		Options: kit.Options{
			CacheSyncTimeout: 10 * time.Second,
			RetryMinDelay:    100 * time.Millisecond,
			RetryMaxDelay:    time.Second,
			Logger:           logs.Logger(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := providertest.NewRecorder()
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Start(runCtx, rec) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			_ = err // a Start error is reported by the steps below
		case <-time.After(waitTimeout):
			t.Errorf("provider Start did not return within %s of its context ending", waitTimeout)
		}
	}()

	var failures []string
	// within waits until cond holds, at most window, and records a failure otherwise; a
	// failed Start ends the wait early.
	within := func(what string, cond func() bool) bool {
		deadline := time.Now().Add(window)
		for {
			if cond() {
				return true
			}
			select {
			case err := <-done:
				done <- err
				failures = append(failures, fmt.Sprintf("Start failed: %v", err))
				return false
			case <-time.After(250 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				failures = append(failures, what)
				return false
			}
		}
	}
	cluster := milo.ClusterName(name)
	var warning string
	_ = within("no Warning Event", func() bool { warning = warningReason(ctx, kind, name); return warning != "" }) &&
		func() bool {
			if err := proxy.Route(name, &rest.Config{Host: "https://127.0.0.1:1"}); err != nil {
				t.Fatal(err)
			}
			return true
		}() &&
		within("the second "+warning+" Event was not recorded as a series", func() bool { return eventCount(ctx, kind, name, warning) >= 2 }) &&
		func() bool { route(t, name, "alpha"); return true }() &&
		within("the project was not engaged", func() bool { e, _ := rec.Latest(cluster); return e.Alive() }) &&
		within("no ClusterEngaged Event", func() bool { return eventCount(ctx, kind, name, kit.ReasonClusterEngaged) >= 1 }) &&
		func() bool { setReadyT(t, mode, name, false); return true }() &&
		within("the project was not disengaged when it stopped being ready", func() bool { e, _ := rec.Latest(cluster); return !e.Alive() }) &&
		func() bool { setReadyT(t, mode, name, true); return true }() &&
		within("the project was not engaged again", func() bool { e, n := rec.Latest(cluster); return n == 2 && e.Alive() })
	if !whole {
		// Errors that change nothing the steps see, such as a watch that is refused after the
		// initial list, are logged.
		if i := slices.IndexFunc(append(logs.Lines(), processLogs.Lines()...), func(l string) bool {
			return strings.Contains(l, "forbidden") && strings.Contains(l, user)
		}); i >= 0 {
			failures = append(failures, "a Forbidden error was logged")
		}
	}
	return failures
}

// warningReason returns the reason of a Warning Event on the object of kind named name, or "".
func warningReason(ctx context.Context, kind, name string) string {
	var list eventsv1.EventList
	if err := host.List(ctx, &list, client.InNamespace(metav1.NamespaceDefault)); err != nil {
		return ""
	}
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name && e.Type == corev1.EventTypeWarning {
			return e.Reason
		}
	}
	return ""
}

// eventCount returns how often an Event of reason was recorded on the object of kind named name:
// 0 without one, its series count if it has a series, 1 otherwise.
func eventCount(ctx context.Context, kind, name, reason string) int32 {
	var list eventsv1.EventList
	if err := host.List(ctx, &list, client.InNamespace(metav1.NamespaceDefault)); err != nil {
		return 0
	}
	var n int32
	for _, e := range list.Items {
		if e.Regarding.Kind != kind || e.Regarding.Name != name || e.Reason != reason {
			continue
		}
		c := int32(1)
		if e.Series != nil {
			c = e.Series.Count
		}
		n = max(n, c)
	}
	return n
}
