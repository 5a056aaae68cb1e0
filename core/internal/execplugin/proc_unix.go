//go:build unix

// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package execplugin

import (
	"fmt"
	"os/exec"
	"syscall"
)

// setProcessGroup starts the plugin as the leader of a new process group, so that killGroup
// reaches whatever it starts.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the plugin's process group. Call it before Wait reaps the leader: until then
// the group's id cannot belong to anybody else.
func killGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	// And the leader itself, should it have left the group: Wait must return.
	_ = cmd.Process.Kill()
}

// exitStatus says how the plugin ended.
func exitStatus(err *exec.ExitError) string {
	if ws, ok := err.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("was killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
	}
	return fmt.Sprintf("exited with status %d", err.ExitCode())
}
