// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	mcbuilder "mcr.dev/core/builder"
	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
)

// A member's credentials are rotated through writes the provider must refuse, while its
// controller is busy: the working instance stays engaged and reconciling through every invalid
// write (the policy: an engaged member keeps the credentials that work until a valid
// replacement engages), the valid write replaces it, and no write made in the member before,
// during or after the rotation is lost, including a burst made just before the replacement.
func TestRotationThroughInvalidWrites(t *testing.T) {
	ns := uniqueName("rotation")
	createNamespace(t, ns, "a", "b")
	l := newLedger(ns)
	p := newKubeconfigProvider(t, kit.Options{Logger: logr.Discard()})
	mgr := newManager(t, p, logr.Discard())
	if err := mcbuilder.ControllerManagedBy(mgr).Named("rotation-" + ns).For(&corev1.ConfigMap{}).Complete(l.reconciler(mgr)); err != nil {
		t.Fatal(err)
	}
	runManager(t, mgr)

	ctx := t.Context()
	first, firstUser, err := memberKubeconfig(ctx, "a", "rotation-first")
	if err != nil {
		t.Fatal(err)
	}
	second, secondUser, err := memberKubeconfig(ctx, "a", "rotation-second")
	if err != nil {
		t.Fatal(err)
	}
	bKubeconfig, _, err := memberKubeconfig(ctx, "b", "rotation-b")
	if err != nil {
		t.Fatal(err)
	}
	p.set("a", first)
	p.set("b", bKubeconfig)
	p.events.waitReason(t, "a", kit.ReasonClusterEngaged, 1)
	p.events.waitReason(t, "b", kit.ReasonClusterEngaged, 1)
	working, err := mgr.GetCluster(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if user, err := providertest.UserOf(ctx, working.GetConfig()); err != nil || user != firstUser {
		t.Fatalf("a is not engaged with its first token: %q, %v", user, err)
	}

	a, b := newWriter(t, l, "a"), newWriter(t, l, "b")
	churnCtx, stopChurn := context.WithCancel(ctx)
	defer stopChurn()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, w := range []*writer{a, b} {
		wg.Go(func() {
			if err := w.churn(churnCtx, churnInterval); err != nil {
				errs <- err
			}
		})
	}
	time.Sleep(3 * time.Second)

	// Three writes the provider refuses, each kept for a few seconds of churn.
	invalidFrom := time.Now()
	steps := []struct {
		what, reason string
		data         []byte
	}{
		{"not a kubeconfig", kit.ReasonInvalidKubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters: [half written")},
		{"an exec plugin the policy refuses", kit.ReasonInvalidKubeconfig, editKubeconfig(t, second, func(u *clientcmdapi.AuthInfo) {
			u.Token = ""
			u.Exec = &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: "get-token", InteractiveMode: clientcmdapi.NeverExecInteractiveMode}
		})},
		{"a token the member refuses", kit.ReasonUnauthorized, editKubeconfig(t, second, func(u *clientcmdapi.AuthInfo) { u.Token = "not-a-valid-token" })},
	}
	for _, step := range steps {
		n := p.events.count("a", step.reason)
		p.set("a", step.data)
		p.events.waitReason(t, "a", step.reason, n+1)
		time.Sleep(2 * time.Second)
		if cl, err := mgr.GetCluster(ctx, "a"); err != nil || cl != working {
			t.Fatalf("after %s: a is no longer served by its working instance (%v)", step.what, err)
		}
	}
	invalidTo := time.Now()

	// A burst just before the valid write, then the valid write.
	for range 30 {
		if err := a.create(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rotated := time.Now()
	p.set("a", second)
	p.events.waitReason(t, "a", kit.ReasonCredentialsRotated, 1)
	replacement, err := mgr.GetCluster(ctx, "a")
	if err != nil || replacement == working {
		t.Fatalf("a was not engaged again with its second token (%v)", err)
	}
	if user, err := providertest.UserOf(ctx, replacement.GetConfig()); err != nil || user != secondUser {
		t.Fatalf("a was engaged again, not with its second token: %q, %v", user, err)
	}
	time.Sleep(5 * time.Second)
	stopChurn()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	testcheck.Within(time.Minute, func() bool { lost, _ := l.lost(everything); return len(lost) == 0 })
	lost, counted := l.lost(everything)
	inA := func(from, to time.Time) writeFilter {
		return func(cluster string, at time.Time) bool { return cluster == "a" && !at.Before(from) && at.Before(to) }
	}
	t.Logf("a, writes while its credentials were invalid (%s): %s", invalidTo.Sub(invalidFrom).Round(time.Second), summary(l.latencies(inA(invalidFrom, invalidTo))))
	t.Logf("a, burst and writes around the replacement: %s", summary(l.latencies(inA(invalidTo, rotated.Add(3*time.Second)))))
	t.Logf("b, all writes: %s", summary(l.latencies(func(c string, _ time.Time) bool { return c == "b" })))
	t.Logf("objects written: %d, not reconciled: %d", counted, len(lost))
	if len(lost) > 0 {
		t.Errorf("%d of %d objects were not reconciled: %s", len(lost), counted, firstLines(lost, 10))
	}
}

// editKubeconfig returns data with its only user edited by edit.
func editKubeconfig(t testing.TB, data []byte, edit func(*clientcmdapi.AuthInfo)) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range cfg.AuthInfos {
		edit(u)
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
