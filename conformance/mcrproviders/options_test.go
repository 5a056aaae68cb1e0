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

func TestOptionsClaimEveryFeatureByDefault(t *testing.T) {
	if got := mcrproviders.Options("kubeconfig").Features; !slices.Equal(got, conformance.ExtendedFeatures()) {
		t.Errorf("Features = %v, want every extended feature", got)
	}
}
