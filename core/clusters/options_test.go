// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters_test

import (
	"strings"
	"testing"
	"time"

	"mcr.dev/core/clusters"
)

func TestOneOptions(t *testing.T) {
	type options struct{ timeout time.Duration }
	if got := clusters.OneOptions[options]("New", nil); got != (options{}) {
		t.Errorf("none: %+v", got)
	}
	if got := clusters.OneOptions("New", []options{{timeout: time.Second}}); got.timeout != time.Second {
		t.Errorf("one: %+v", got)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "New: at most one Options") {
			t.Errorf("two: recovered %v, want a panic naming New", r)
		}
	}()
	clusters.OneOptions("New", []options{{}, {}})
}
