// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command docker is a stand-in for the docker command line that serves the calls the kind
// library makes to list kind clusters and read their kubeconfigs, from the state directory named
// by $MCR_KIND_STANDIN_STATE. See package mcr.dev/providers/kind/internal/standin.
package main

import (
	"os"

	"mcr.dev/providers/kind/internal/standin"
)

func main() {
	os.Exit(standin.Run(os.Getenv(standin.StateDirEnv), os.Args[1:], os.Stdout, os.Stderr))
}
