// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleetstatus

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestTruncate(t *testing.T) {
	s := "ab" + strings.Repeat("日本", 10)
	for limit := 0; limit <= len(s)+1; limit++ {
		got := truncate(s, limit)
		if len(got) > limit && len(s) > limit {
			t.Errorf("truncate(%d) = %d bytes", limit, len(got))
		}
		if !utf8.ValidString(got) {
			t.Errorf("truncate(%d) = %q, not valid UTF-8", limit, got)
		}
		if limit >= len(s) && got != s {
			t.Errorf("truncate(%d) = %q, want it unchanged", limit, got)
		}
	}
}

func TestBoundedList(t *testing.T) {
	items := make([]string, 40)
	for i := range items {
		items[i] = fmt.Sprintf("cluster-%02d (Forbidden)", i)
	}
	full := boundedList("Synced 0/40", items, 1<<20)
	if strings.Contains(full, "more") || strings.Count(full, "(Forbidden)") != 40 {
		t.Errorf("with room for all: %q", full)
	}
	for limit := 0; limit < len(full); limit++ {
		got := boundedList("Synced 0/40", items, limit)
		if len(got) > limit {
			t.Fatalf("limit %d: %d bytes: %q", limit, len(got), got)
		}
		listed := strings.Count(got, "(Forbidden)")
		// Whenever the head fits with the count, the clusters left out are counted.
		if limit >= len("Synced 0/40, failing: 40 clusters") {
			switch {
			case listed == 0 && !strings.HasSuffix(got, ", failing: 40 clusters"),
				listed > 0 && !strings.HasSuffix(got, fmt.Sprintf(" and %d more", 40-listed)):
				t.Errorf("limit %d: %q does not count the %d left out", limit, got, 40-listed)
			}
		}
	}
}

func TestSooner(t *testing.T) {
	none, soon, late := reconcile.Result{}, reconcile.Result{RequeueAfter: 1}, reconcile.Result{RequeueAfter: 2}
	for _, tc := range []struct{ a, b, want reconcile.Result }{
		{none, none, none}, {none, late, late}, {late, none, late}, {soon, late, soon}, {late, soon, soon},
	} {
		if got := Sooner(tc.a, tc.b); got != tc.want {
			t.Errorf("Sooner(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// A cluster with several condition types is ready only when all are True; the reason shown is
// that of its first False condition.
func TestSummaryOfSeveralTypes(t *testing.T) {
	a := New(nil, Options{})
	f, u, tr := metav1.ConditionFalse, metav1.ConditionUnknown, metav1.ConditionTrue
	ready, total, s := a.summary([]ClusterCondition{
		{Cluster: "a", Type: "Applied", Status: tr}, {Cluster: "a", Type: "Healthy", Status: tr},
		{Cluster: "b", Type: "Applied", Status: u, Reason: "Waiting"}, {Cluster: "b", Type: "Healthy", Status: f, Reason: "CrashLoop"},
		{Cluster: "c", Type: "Applied", Status: u, Reason: "Waiting"}, {Cluster: "c", Type: "Healthy", Status: tr},
	}, 1, metav1.Time{})
	if ready != 1 || total != 3 || s.Status != f || s.Message != "Synced 1/3, failing: b (CrashLoop), c (Waiting)" {
		t.Errorf("summary: %d/%d %+v", ready, total, s)
	}
}
