// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

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
	rules := providertest.MustManifestRules(t, "config/rbac.yaml", "ClusterRole")
	providertest.RunPermissionTests(t, providertest.PermissionTest{
		Rules:    rules,
		Variants: []string{string(milo.ModeProject), string(milo.ModeProjectControlPlane)},
		Scenario: func(t *testing.T, c providertest.PermissionCase, mode string) []string {
			namespace := fmt.Sprintf("milo-rbac-%d-%s", c.Index, strings.ToLower(mode))
			return runModeWithRules(t, namespace, milo.Mode(mode), c.Rules, c.Whole())
		},
	})
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
	sa := providertest.ServiceAccountConfig(t, fleet.Member("milo"), envtest.ServiceAccountOptions{
		Namespace:    namespace,
		Name:         "provider",
		ClusterRules: rules,
	})

	// The project's control plane is first not served (404), then served from where nothing
	// answers (502): two Warnings of one reason on the unchanged object, the second a series of
	// the first (a patch). Then it is served and the project engaged, disengaged when it is no
	// longer ready (seen through the watch) and engaged again.
	name := uniqueName("rbac")
	t.Cleanup(func() { proxy.Unroute(name) })
	labels := map[string]string{"test.mcr.dev/rbac": namespace}
	kind := "Project"
	var err error
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
	trial := providertest.StartTrial(t, p, window, waitTimeout)
	cluster := milo.ClusterName(name)
	target := providertest.EventTarget{Kind: kind, Name: name}
	events := func(reason string) int32 {
		return providertest.EventCount(ctx, host, metav1.NamespaceDefault, target, reason)
	}
	var warning string
	_ = trial.Within("no Warning Event", func() bool { warning = warningReason(ctx, kind, name); return warning != "" }) &&
		func() bool {
			if err := proxy.Route(name, &rest.Config{Host: "https://127.0.0.1:1"}); err != nil {
				t.Fatal(err)
			}
			return true
		}() &&
		trial.Within("the second "+warning+" Event was not recorded as a series", func() bool { return events(warning) >= 2 }) &&
		func() bool { route(t, name, "alpha"); return true }() &&
		trial.Within("the project was not engaged", func() bool { e, _ := trial.Recorder.Latest(cluster); return e.Alive() }) &&
		trial.Within("no ClusterEngaged Event", func() bool { return events(kit.ReasonClusterEngaged) >= 1 }) &&
		func() bool { setReadyT(t, mode, name, false); return true }() &&
		trial.Within("the project was not disengaged when it stopped being ready", func() bool { e, _ := trial.Recorder.Latest(cluster); return !e.Alive() }) &&
		func() bool { setReadyT(t, mode, name, true); return true }() &&
		trial.Within("the project was not engaged again", func() bool { e, n := trial.Recorder.Latest(cluster); return n == 2 && e.Alive() })
	if !whole {
		// Errors that change nothing the steps see, such as a watch that is refused after the
		// initial list, are logged.
		trial.FailForbidden("system:serviceaccount:"+namespace+":provider", logs, &providertest.ProcessLogs)
	}
	return trial.Failures()
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
