// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest_test

import (
	"testing"
	"time"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
)

// myProvider stands for the provider under test.
var myProvider interface {
	multicluster.Provider
	multicluster.ProviderRunnable
}

// A provider's own test starts it with a Recorder and waits for what it should engage.
func ExampleStart() {
	_ = func(t *testing.T) {
		run := providertest.Start(t, myProvider, 30*time.Second)
		e := run.Recorder.WaitEngaged(t, myProvider, "member-1", time.Minute)
		// ... delete member-1's object at the source of truth ...
		run.Recorder.WaitDisengaged(t, myProvider, "member-1", e, time.Minute)
	}
}

// A provider's permission test hands its manifest and one scenario to RunPermissionTests: the
// scenario runs the provider as an identity with the case's rules and returns what failed.
func ExampleRunPermissionTests() {
	_ = func(t *testing.T) {
		rules, err := providertest.ManifestRules("config/rbac.yaml", "ClusterRole")
		if err != nil {
			t.Fatal(err)
		}
		providertest.RunPermissionTests(t, providertest.PermissionTest{
			Rules: rules,
			Scenario: func(t *testing.T, c providertest.PermissionCase, _ string) []string {
				// ... build myProvider with a ServiceAccountConfig that has c.Rules ...
				trial := providertest.StartTrial(t, myProvider, 15*time.Second, time.Minute)
				trial.Within("member-1 engaged", func() bool {
					e, _ := trial.Recorder.Latest("member-1")
					return e.Alive()
				})
				return trial.Failures()
			},
		})
	}
}
