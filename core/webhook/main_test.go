// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package webhook_test

import (
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/envtest"
)

// fleet is shared by the package's tests: three members with different policies.
var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	// Tests that look at log lines give their webhook a logger of their own.
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	envtest.Main(m, envtest.Options{Members: []string{"a", "b", "c"}}, func(f *envtest.Fleet) error {
		fleet = f
		return nil
	})
}
