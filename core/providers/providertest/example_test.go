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
