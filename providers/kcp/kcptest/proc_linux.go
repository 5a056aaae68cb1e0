// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcptest

import "syscall"

// sysProcAttr makes the kernel kill kcp when the test binary dies without calling Stop (a
// panic, a timeout, SIGKILL), so that no kcp outlives a test run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
