//go:build !linux

// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package execplugin

// waitExit returns a closed channel where a process cannot be waited for without reaping it:
// the plugin's group is killed as soon as its output is complete.
func waitExit(int) <-chan struct{} {
	done := make(chan struct{})
	close(done)
	return done
}
