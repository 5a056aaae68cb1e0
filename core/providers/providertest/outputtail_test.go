// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest_test

import (
	"fmt"
	"strings"
	"testing"

	"mcr.dev/core/providers/providertest"
)

func TestOutputTailPassesOnWholeLinesAndKeepsTheLast(t *testing.T) {
	var out strings.Builder
	tail := &providertest.OutputTail{Prefix: "[kcp] ", Out: &out, Lines: 3}
	for i := range 5 {
		fmt.Fprintf(tail, "line %d\n", i)
	}
	_, _ = tail.Write([]byte("half"))
	if got, want := tail.String(), "line 2\nline 3\nline 4"; got != want {
		t.Errorf("kept %q, want %q", got, want)
	}
	if got := strings.Count(out.String(), "[kcp] line "); got != 5 || strings.Contains(out.String(), "half") {
		t.Errorf("passed on %q, want the 5 whole lines, prefixed", out.String())
	}
}
