// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kind

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// Errors of engine commands carry the engine's message, except for exec, whose output is what
// ran in the node: there, the admin kubeconfig.
func TestDescribeWithholdsExecOutput(t *testing.T) {
	ps := &kindexec.RunError{
		Command: []string{"docker", "ps", "-a"},
		Output:  []byte("Cannot connect to the Docker daemon at unix:///var/run/docker.sock.\n"),
		Inner:   errors.New("exit status 1"),
	}
	if got := describe(ps).Error(); !strings.Contains(got, "Cannot connect to the Docker daemon") {
		t.Errorf("describe(ps failure) = %q, want the engine's message", got)
	}
	exec := &kindexec.RunError{
		Command: []string{"docker", "exec", "--privileged", "a-control-plane", "cat", "/etc/kubernetes/admin.conf"},
		Output:  []byte("client-key-data: c2VjcmV0\n"),
		Inner:   errors.New("exit status 1"),
	}
	if got := describe(exec).Error(); strings.Contains(got, "c2VjcmV0") || strings.Contains(got, "client-key-data") {
		t.Errorf("describe(exec failure) = %q quotes the command's output", got)
	}
	if !errors.Is(describe(ps), ps) {
		t.Error("describe does not wrap the original error")
	}
}

// A call that does not answer in time is reported as such, and callers of the same key join it
// instead of starting it again; once it finishes, the next call runs anew.
func TestKindCallsJoinStuckCalls(t *testing.T) {
	k := newKindCalls(nil, 50*time.Millisecond, 1)
	release := make(chan struct{})
	started := 0
	stuck := func() (any, error) {
		started++ // only ever run by one goroutine at a time, by construction
		<-release
		return "done", nil
	}
	for range 3 {
		if _, err := k.do(context.Background(), "key", stuck); !errors.Is(err, errNoAnswer) {
			t.Fatalf("do = %v, want errNoAnswer", err)
		}
	}
	close(release)
	if !k.wait(time.Minute) {
		t.Fatal("the call did not finish after it was released")
	}
	if started != 1 {
		t.Errorf("the stuck call was started %d times, want once", started)
	}
	v, err := k.do(context.Background(), "key", func() (any, error) { return "again", nil })
	if err != nil || v != "again" {
		t.Errorf("do after the stuck call finished = %v, %v; want a new call", v, err)
	}
}
