// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package mcrproviders

import (
	"slices"
	"testing"

	"mcr.dev/conformance"
)

// Options are the conformance options of the provider mcr.dev/providers/<project>, claiming
// every extended feature but notClaimed and InPlaceCredentialRefresh, which InPlace claims for a
// run whose provider refreshes credentials in place (kit.Options.RefreshCredentialsInPlace, on
// by default); a run that turns the option off passes the rotation tests by engaging anew. project may carry a qualifier after the provider's
// path, such as "gardener (seed topology)", for providers the suite runs in several setups.
func Options(project string, notClaimed ...conformance.Feature) conformance.Options {
	return conformance.Options{
		Features:       ExtendedFeaturesBut(append(notClaimed, conformance.InPlaceCredentialRefresh)...),
		Implementation: Implementation(project),
	}
}

// InPlace turns o into the options of a second, short run of a provider with in-place credential
// refresh turned on: it claims InPlaceCredentialRefresh and runs only the rotation tests, which
// the claim changes, and the feature's own test; the first run covers the rest.
func InPlace(o conformance.Options) conformance.Options {
	o.Features = append(slices.Clone(o.Features), conformance.InPlaceCredentialRefresh)
	o.Only = []string{conformance.ReengageOnCredentialRotation, conformance.RepeatedCredentialRotation, conformance.ReengageOnServerChange}
	o.Implementation.Project += " (in-place credential refresh)"
	return o
}

// RunInPlace runs the tests of InPlace(o) against h, through conformance.Assess (Run allows one
// suite per test binary, and the provider's TestConformance has it), and fails t for each test
// that did not pass. h's provider must refresh credentials in place.
func RunInPlace(t *testing.T, h conformance.Harness, o conformance.Options) {
	t.Helper()
	o = InPlace(o)
	rep, err := conformance.Assess(t.Context(), h, o, t.Logf)
	if err != nil {
		t.Fatalf("conformance: %v", err)
	}
	ran := 0
	for _, res := range rep.Tests {
		if !slices.Contains(o.Only, res.ID) {
			continue
		}
		ran++
		if res.Result != conformance.Passed {
			t.Errorf("%s %s: %s", res.ID, res.Result, res.Message)
		}
	}
	if ran != len(o.Only) {
		t.Errorf("the report holds %d of the %d in-place tests", ran, len(o.Only))
	}
}

// Implementation names the provider mcr.dev/providers/<project> as maintained by mcr.
func Implementation(project string) conformance.Implementation {
	return conformance.Implementation{Organization: "mcr", Project: "mcr.dev/providers/" + project}
}

// ExtendedFeaturesBut returns conformance.ExtendedFeatures without notClaimed, in the same order.
func ExtendedFeaturesBut(notClaimed ...conformance.Feature) []conformance.Feature {
	return slices.DeleteFunc(conformance.ExtendedFeatures(), func(f conformance.Feature) bool {
		return slices.Contains(notClaimed, f)
	})
}
