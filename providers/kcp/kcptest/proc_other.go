//go:build !linux

// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcptest

import "syscall"

// sysProcAttr has nothing to add outside Linux, where a test binary that dies without calling
// Stop leaves kcp running.
func sysProcAttr() *syscall.SysProcAttr { return nil }
