// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package execplugin

import (
	"errors"

	"golang.org/x/sys/unix"
)

// waitExit returns a channel closed once the process pid has ended, without reaping it (so that
// its process group can still be killed safely, and Wait still gets its status).
func waitExit(pid int) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if !errors.Is(err, unix.EINTR) {
				return
			}
		}
	}()
	return done
}
