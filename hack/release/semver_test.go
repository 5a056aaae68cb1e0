// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"slices"
	"testing"
)

func TestParseVersion(t *testing.T) {
	for _, s := range []string{"v0.1.0", "v1.2.3", "v0.1.0-rc.1", "v0.2.0-dev", "v10.20.30-alpha.beta.1"} {
		v, err := parseVersion(s)
		if err != nil {
			t.Errorf("parseVersion(%q): %v", s, err)
			continue
		}
		if v.String() != s {
			t.Errorf("parseVersion(%q).String() = %q", s, v.String())
		}
	}
	for _, s := range []string{"", "0.1.0", "v0.1", "v01.0.0", "v0.1.0+build", "v0.1.0-", "v0.1.0-rc.01", "v0.1.0-rc..1", "main"} {
		if v, err := parseVersion(s); err == nil {
			t.Errorf("parseVersion(%q) = %v, want an error", s, v)
		}
	}
}

func TestVersionOrder(t *testing.T) {
	// Ascending by semver precedence, as in semver.org's examples.
	ordered := []string{
		"v0.0.9", "v0.1.0-alpha", "v0.1.0-alpha.1", "v0.1.0-alpha.beta", "v0.1.0-beta",
		"v0.1.0-beta.2", "v0.1.0-beta.11", "v0.1.0-rc.1", "v0.1.0", "v0.1.1", "v0.2.0", "v0.10.0", "v1.0.0",
	}
	var vs []version
	for _, s := range ordered {
		v, err := parseVersion(s)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	shuffled := slices.Clone(vs)
	slices.Reverse(shuffled)
	shuffled[0], shuffled[5] = shuffled[5], shuffled[0]
	slices.SortFunc(shuffled, version.compare)
	for i := range vs {
		if shuffled[i] != vs[i] {
			t.Fatalf("sorted: %v, want %v", shuffled, vs)
		}
		if vs[i].compare(vs[i]) != 0 {
			t.Errorf("%v does not equal itself", vs[i])
		}
	}
}

func TestBumpAndNextDev(t *testing.T) {
	tests := []struct {
		prev, next string
		want       bump
	}{
		{"v0.1.0", "v0.1.0", bumpNone},
		{"v0.1.0", "v0.1.1", bumpPatch},
		{"v0.1.3", "v0.2.0", bumpMinor},
		{"v0.1.0", "v0.2.0-rc.1", bumpMinor},
		{"v0.9.0", "v1.0.0", bumpMajor},
	}
	for _, tt := range tests {
		prev, _ := parseVersion(tt.prev)
		next, _ := parseVersion(tt.next)
		if got := next.bumpFrom(prev); got != tt.want {
			t.Errorf("%s after %s: %v, want %v", tt.next, tt.prev, got, tt.want)
		}
	}
	for v, want := range map[string]string{"v0.1.0": "v0.2.0-dev", "v1.4.2": "v1.5.0-dev", "v0.3.0-rc.1": "v0.3.0-dev"} {
		pv, _ := parseVersion(v)
		if got := pv.nextDev().String(); got != want {
			t.Errorf("nextDev(%s) = %s, want %s", v, got, want)
		}
	}
}
