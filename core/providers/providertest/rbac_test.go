// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// grants reports whether rules allow verb on resource in group.
func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

func TestEachPermissionRemoved(t *testing.T) {
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"}, Verbs: []string{"get", "list", "watch"}},
		{NonResourceURLs: []string{"/readyz"}, Verbs: []string{"get"}},
	}
	type perm struct{ group, resource, verb string }
	var all []perm
	for _, r := range rules[:2] {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					all = append(all, perm{g, res, v})
				}
			}
		}
	}
	removals := EachPermissionRemoved(rules)
	if len(removals) != len(all) {
		t.Fatalf("got %d removals, want %d", len(removals), len(all))
	}
	for i, rm := range removals {
		gone := all[i]
		for _, p := range all {
			if got := grants(rm.Rules, p.group, p.resource, p.verb); got != (p != gone) {
				t.Errorf("%s: grants %v = %v", rm.Removed, p, got)
			}
		}
		if !slices.ContainsFunc(rm.Rules, func(r rbacv1.PolicyRule) bool { return len(r.NonResourceURLs) > 0 }) {
			t.Errorf("%s: the non-resource rule was dropped", rm.Removed)
		}
	}
	if removals[0].Removed != "create events" || removals[2].Removed != "create events.events.k8s.io" {
		t.Errorf("names: %q, %q", removals[0].Removed, removals[2].Removed)
	}
	// The input is not changed.
	if len(rules[1].Verbs) != 3 || len(rules[1].Resources) != 2 {
		t.Errorf("input changed: %+v", rules[1])
	}
}
