// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"fmt"
	"strings"
	"testing"
)

// A process's output is passed on line by line, prefixed, and only its last tailLines lines are
// kept, with a line not yet ended shown last.
func TestLogTailPassesOnWholeLinesAndKeepsTheLast(t *testing.T) {
	var out strings.Builder
	tail := &logTail{prefix: "[kcp] ", out: &out}
	for i := range tailLines + 5 {
		_, _ = fmt.Fprintf(tail, "line %d\n", i)
	}
	_, _ = tail.Write([]byte("half"))
	kept := strings.Split(tail.String(), "\n")
	if len(kept) != tailLines+1 || strings.TrimSpace(kept[0]) != "line 5" || strings.TrimSpace(kept[tailLines]) != "half" {
		t.Errorf("kept %q, want lines 5 to %d and the unfinished one", kept, tailLines+4)
	}
	if got := strings.Count(out.String(), "[kcp] line "); got != tailLines+5 || strings.Contains(out.String(), "half") {
		t.Errorf("passed on %q, want the %d whole lines, prefixed", out.String(), tailLines+5)
	}
}
