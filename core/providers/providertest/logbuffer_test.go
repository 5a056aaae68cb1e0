// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest_test

import (
	"strings"
	"testing"

	"mcr.dev/core/providers/providertest"
)

func TestLogBuffer(t *testing.T) {
	var b providertest.LogBuffer
	log := b.Logger()
	log.Info("Engaged cluster", "cluster", "ns/a")
	log.V(1).Info("Cluster not engaged", "cluster", "ns/b")
	log.V(2).Info("too verbose", "cluster", "ns/c")

	if got, err := b.Find("Engaged", `"ns/a"`); err != nil || !strings.Contains(got, "Engaged cluster") {
		t.Errorf("Find(Engaged, ns/a) = %q, %v; want the Engaged line", got, err)
	}
	if _, err := b.Find("Engaged", `"ns/b"`); err == nil {
		t.Error("Find matched parts that are on different lines")
	}
	if !b.Contains("not engaged") {
		t.Error("Contains missed the V(1) line")
	}
	if b.Contains("too verbose") {
		t.Error("a V(2) line was kept")
	}
	if got := b.All("cluster", "engaged"); len(got) != 1 || !strings.Contains(got[0], `"ns/b"`) {
		t.Errorf("All(cluster, engaged) = %q, want the ns/b line only", got)
	}
	if n := len(b.Lines()); n != 2 {
		t.Errorf("Lines() has %d lines, want 2", n)
	}
}
