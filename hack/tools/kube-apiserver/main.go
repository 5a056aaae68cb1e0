// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command kube-apiserver is the upstream kube-apiserver, built from k8s.io/kubernetes at the
// version pinned in go.mod. It exists so that tests get a real apiserver without a download
// beyond the Go module proxy.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
