// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// sysProcAttr makes the kernel kill etcd and kube-apiserver when the test binary dies without
// calling Stop (a panic, a timeout, SIGKILL), so no stray servers outlive a test run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// memoryStatus reads the resident set size and its peak of a process, in bytes, from
// /proc/<pid>/status.
func memoryStatus(pid int) (rss, peak int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("reading memory of process %d: %w", pid, err)
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		field, value, ok := strings.Cut(s.Text(), ":")
		if !ok || (field != "VmRSS" && field != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("parsing %s of process %d: %w", field, pid, err)
		}
		if field == "VmRSS" {
			rss = kb * 1024
		} else {
			peak = kb * 1024
		}
	}
	if err := s.Err(); err != nil {
		return 0, 0, fmt.Errorf("reading memory of process %d: %w", pid, err)
	}
	return rss, peak, nil
}
