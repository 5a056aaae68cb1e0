//go:build !unix

// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package execplugin

import (
	"fmt"
	"os/exec"
)

// setProcessGroup does nothing where there are no process groups.
func setProcessGroup(*exec.Cmd) {}

// killGroup kills the plugin itself where there are no process groups.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// exitStatus says how the plugin ended.
func exitStatus(err *exec.ExitError) string {
	return fmt.Sprintf("exited with status %d", err.ExitCode())
}
