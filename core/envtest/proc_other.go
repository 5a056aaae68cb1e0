//go:build !linux

// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"errors"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func memoryStatus(int) (rss, peak int64, err error) {
	return 0, 0, errors.New("memory status is only read on Linux")
}
