// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcr.dev/core/internal/testcheck"
)

func TestStopLeavesNothingBehind(t *testing.T) {
	goroutinesBefore := runtime.NumGoroutine()
	f, err := Start(t.Context(), Options{Members: []string{"one", "two"}, TempDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	pids := []int{f.etcd.Pid()}
	for _, m := range f.Members() {
		pids = append(pids, m.proc.Load().Pid())
	}
	dir := f.dir

	if err := f.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := f.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	for _, pid := range pids {
		// The processes were reaped by Wait, so the pid no longer exists (unless reused, which
		// cannot happen this quickly on Linux's increasing pid allocation).
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists after Stop (kill -0: %v)", pid, err)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("fleet directory %s still exists after Stop (stat: %v)", dir, err)
	}
	if _, err := f.AddMember(t.Context(), "three"); err == nil {
		t.Errorf("AddMember succeeded on a stopped fleet")
	}

	// Every goroutine the fleet started (process waiters, output copiers, probes) has ended.
	testcheck.WaitForGoroutines(t, goroutinesBefore, 10*time.Second)
}

func TestStartFailureIsExplained(t *testing.T) {
	// An apiserver flag it does not know makes kube-apiserver exit at once; the error must carry
	// its last output so that the reason is visible without re-running with Output set.
	_, err := Start(t.Context(), Options{
		Members:        []string{"broken"},
		APIServerFlags: map[string]string{"no-such-flag": "1"},
		TempDir:        t.TempDir(),
	})
	if err == nil {
		t.Fatalf("Start succeeded with an unknown apiserver flag")
	}
	for _, want := range []string{`member "broken"`, "(kube-apiserver) exited early", "no-such-flag"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error does not mention %q:\n%v", want, err)
		}
	}
}
