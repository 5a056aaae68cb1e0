package main

import (
	"context"
	"testing"
	"time"
)

// The demo is the project's front door: `make demo` must keep working, so CI runs it too (with
// two clusters to keep it short). run fails unless every cluster's ConfigMap was reconciled,
// checked directly in each cluster.
func TestQuickstartOnEmbeddedFleet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := run(ctx, 2, ""); err != nil {
		t.Fatal(err)
	}
}
