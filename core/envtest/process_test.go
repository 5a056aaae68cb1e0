// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"mcr.dev/core/envtest"
)

// A process's output is kept and forwarded with its name; WaitUntil ends with the process's exit
// and its last output, or once ready succeeds; Stop ends a process that ignores nothing.
func TestProcess(t *testing.T) {
	// Written only by the process's output copier, which ends before Done is closed.
	var out strings.Builder
	short, err := envtest.StartProcess("short", "/bin/sh", []string{"-c", "echo starting; exit 3"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	err = short.WaitUntil(t.Context(), func() error { return errors.New("not yet") })
	if err == nil || !strings.Contains(err.Error(), "short (sh) exited early") || !strings.Contains(err.Error(), "starting") {
		t.Errorf("WaitUntil on a process that exits = %v, want its exit with its output", err)
	}
	if !short.Exited() || !strings.Contains(out.String(), "[short] starting\n") {
		t.Errorf("Exited = %v, forwarded output %q", short.Exited(), out.String())
	}

	long, err := envtest.StartProcess("long", "/bin/sh", []string{"-c", "exec sleep 600"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var probes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if probes.Add(1) < 3 {
			http.Error(w, "[-]etcd failed", http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	if err := envtest.ProbeOK(t.Context(), srv.Client(), srv.URL); err == nil || !strings.Contains(err.Error(), "[-]etcd failed") {
		t.Errorf("ProbeOK of a failing check = %v, want the check in the error", err)
	}
	if err := long.WaitUntil(t.Context(), func() error { return envtest.ProbeOK(t.Context(), srv.Client(), srv.URL) }); err != nil {
		t.Errorf("WaitUntil of a check that passes on the third probe: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := long.WaitUntil(ctx, func() error { return errors.New("never") }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitUntil past its context = %v, want DeadlineExceeded", err)
	}
	if err := long.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-long.Done():
	default:
		t.Error("Stop returned before the process exited")
	}
}
