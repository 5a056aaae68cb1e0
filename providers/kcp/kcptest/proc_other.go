//go:build !linux

package kcptest

import "syscall"

// sysProcAttr has nothing to add outside Linux, where a test binary that dies without calling
// Stop leaves kcp running.
func sysProcAttr() *syscall.SysProcAttr { return nil }
