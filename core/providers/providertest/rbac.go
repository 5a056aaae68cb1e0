// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"fmt"
	"os"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// RuleRemoval is a set of RBAC rules with one permission taken away.
type RuleRemoval struct {
	// Removed names the permission taken away: "<verb> <resource>.<group>", with the resource
	// names it was limited to, if any.
	Removed string
	// Rules are the remaining rules.
	Rules []rbacv1.PolicyRule
}

// EachPermissionRemoved returns, for every verb on every resource of every rule, the rules
// without that one permission, so that a test can show that each permission a provider's RBAC
// manifest grants is needed: the provider, run with the remaining rules, fails at something it
// does with all of them. A permission no test can show to be needed should leave the manifest.
// Rules that grant non-resource URLs are kept as they are.
func EachPermissionRemoved(rules []rbacv1.PolicyRule) []RuleRemoval {
	var out []RuleRemoval
	for i, rule := range rules {
		if len(rule.NonResourceURLs) > 0 {
			continue
		}
		for _, group := range rule.APIGroups {
			for _, resource := range rule.Resources {
				for _, verb := range rule.Verbs {
					out = append(out, RuleRemoval{
						Removed: permissionName(verb, resource, group, rule.ResourceNames),
						Rules:   without(rules, i, group, resource, verb),
					})
				}
			}
		}
	}
	return out
}

func permissionName(verb, resource, group string, names []string) string {
	s := verb + " " + resource
	if group != "" {
		s += "." + group
	}
	if len(names) > 0 {
		s += fmt.Sprintf(" (names %s)", strings.Join(names, ","))
	}
	return s
}

// without returns rules where rule i no longer grants verb on group/resource: the rule is split
// into the part that keeps every other verb and the parts that keep verb on the other groups
// and resources.
func without(rules []rbacv1.PolicyRule, i int, group, resource, verb string) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, 0, len(rules)+3)
	for j, r := range rules {
		if j != i {
			out = append(out, *r.DeepCopy())
			continue
		}
		keep := func(groups, resources, verbs []string) {
			if len(groups) == 0 || len(resources) == 0 || len(verbs) == 0 {
				return
			}
			c := *r.DeepCopy()
			c.APIGroups, c.Resources, c.Verbs = slices.Clone(groups), slices.Clone(resources), slices.Clone(verbs)
			out = append(out, c)
		}
		others := func(all []string, one string) []string {
			return slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == one })
		}
		keep(r.APIGroups, r.Resources, others(r.Verbs, verb))
		keep(r.APIGroups, others(r.Resources, resource), []string{verb})
		keep(others(r.APIGroups, group), []string{resource}, []string{verb})
	}
	return out
}

// ListWithoutStreaming makes client-go's informers in this process list and then watch, as they
// do against apiservers that cannot stream the initial list through the watch (WatchList),
// instead of streaming it. Call it in TestMain before any client is built: a permission test
// can then show that a provider needs list as well as watch, which a streaming informer does not
// use.
func ListWithoutStreaming() error {
	if err := os.Setenv("KUBE_FEATURE_WatchListClient", "false"); err != nil {
		return fmt.Errorf("providertest: turning streaming lists off: %w", err)
	}
	return nil
}
