// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig

import (
	"slices"
	"testing"
)

// TestOptionsNamespaces: Namespaces defaults to the deprecated Namespace, else to
// DefaultNamespace alone; empty entries are dropped.
func TestOptionsNamespaces(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want []string
	}{
		{"default", Options{}, []string{DefaultNamespace}},
		{"deprecated Namespace", Options{Namespace: "fleet"}, []string{"fleet"}},
		{"Namespaces wins", Options{Namespaces: []string{"a", "", "b"}, Namespace: "fleet"}, []string{"a", "b"}},
		{"only empty entries", Options{Namespaces: []string{""}}, []string{DefaultNamespace}},
	} {
		if got := tc.opts.withDefaults().Namespaces; !slices.Equal(got, tc.want) {
			t.Errorf("%s: Namespaces = %v, want %v", tc.name, got, tc.want)
		}
	}
}
