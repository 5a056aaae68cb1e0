// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package mcrproviders_test

import (
	"slices"
	"testing"

	"mcr.dev/conformance"
	"mcr.dev/conformance/mcrproviders"
)

func TestOptionsClaimAllButNotClaimed(t *testing.T) {
	o := mcrproviders.Options("file", conformance.MemberReadiness, conformance.SourceRestart)
	want := []conformance.Feature{
		conformance.CredentialRotation, conformance.EngageErrorRecovery, conformance.Scale,
		conformance.UnresponsiveMembers, conformance.CredentialHygiene, conformance.PeriodicResync,
	}
	if !slices.Equal(o.Features, want) {
		t.Errorf("Features = %v, want %v", o.Features, want)
	}
	if o.Implementation.Organization != "mcr" || o.Implementation.Project != "mcr.dev/providers/file" {
		t.Errorf("Implementation = %+v, want mcr's mcr.dev/providers/file", o.Implementation)
	}
}

func TestOptionsClaimEveryFeatureButInPlaceRefreshByDefault(t *testing.T) {
	got := mcrproviders.Options("kubeconfig").Features
	want := slices.DeleteFunc(conformance.ExtendedFeatures(), func(f conformance.Feature) bool { return f == conformance.InPlaceCredentialRefresh })
	if !slices.Equal(got, want) {
		t.Errorf("Features = %v, want every extended feature but %s", got, conformance.InPlaceCredentialRefresh)
	}
}

func TestInPlaceClaimsRefreshForTheRotationTestsOnly(t *testing.T) {
	base := mcrproviders.Options("file", conformance.MemberReadiness)
	o := mcrproviders.InPlace(base)
	if !slices.Contains(o.Features, conformance.InPlaceCredentialRefresh) || !slices.Contains(o.Features, conformance.CredentialRotation) {
		t.Errorf("Features = %v, want InPlaceCredentialRefresh with CredentialRotation", o.Features)
	}
	if slices.Contains(base.Features, conformance.InPlaceCredentialRefresh) {
		t.Error("InPlace changed the Features of the options it was given")
	}
	if want := []string{conformance.ReengageOnCredentialRotation, conformance.RepeatedCredentialRotation, conformance.ReengageOnServerChange}; !slices.Equal(o.Only, want) {
		t.Errorf("Only = %v, want %v", o.Only, want)
	}
}
