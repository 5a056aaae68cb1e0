// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"fmt"
	"os"
	"testing"

	"k8s.io/klog/v2"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/envtest"
)

// ProcessLogs receives, once Main ran, every line logged through the process-wide loggers
// (controller-runtime's and klog's), for leak checks to scan. Tests that look at a provider's
// own logs give the provider a logger of its own.
var ProcessLogs LogBuffer

// MainOptions configure Main.
type MainOptions struct {
	// Members names the fleet's apiservers (envtest.Options.Members).
	Members []string
	// ListWithoutStreaming turns streaming lists off for the process (see ListWithoutStreaming),
	// for packages whose permission tests show that list is needed as well as watch.
	ListWithoutStreaming bool
}

// Main is the TestMain of a provider's tests: it sends the process-wide loggers to ProcessLogs
// and runs the tests on one fleet shared by the package (envtest.Main), after setup kept it.
func Main(m *testing.M, opts MainOptions, setup func(*envtest.Fleet) error) {
	if opts.ListWithoutStreaming {
		if err := ListWithoutStreaming(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	ctrllog.SetLogger(ProcessLogs.Logger())
	klog.SetLogger(ProcessLogs.Logger())
	envtest.Main(m, envtest.Options{Members: opts.Members}, setup)
}
