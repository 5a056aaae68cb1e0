// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package mcrproviders

import (
	"slices"

	"mcr.dev/conformance"
)

// Options are the conformance options of the provider mcr.dev/providers/<project>, claiming
// every extended feature but notClaimed. project may carry a qualifier after the provider's
// path, such as "gardener (seed topology)", for providers the suite runs in several setups.
func Options(project string, notClaimed ...conformance.Feature) conformance.Options {
	return conformance.Options{
		Features:       ExtendedFeaturesBut(notClaimed...),
		Implementation: Implementation(project),
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
