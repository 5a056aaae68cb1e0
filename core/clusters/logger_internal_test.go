// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// TestOptionsLoggerAndDeprecatedLog: Logger is used; the deprecated Log only when Logger is unset.
func TestOptionsLoggerAndDeprecatedLog(t *testing.T) {
	var lines []string
	capture := func(name string) logr.Logger {
		return funcr.New(func(_, _ string) { lines = append(lines, name) }, funcr.Options{})
	}
	for _, tc := range []struct {
		name string
		opts Options[cluster.Cluster]
		want string
	}{
		{"Logger", Options[cluster.Cluster]{Logger: capture("logger")}, "logger"},
		{"deprecated Log", Options[cluster.Cluster]{Log: capture("log")}, "log"},
		{"both", Options[cluster.Cluster]{Logger: capture("logger"), Log: capture("log")}, "logger"},
	} {
		lines = nil
		tc.opts.withDefaults().Logger.Info("probe")
		if len(lines) != 1 || lines[0] != tc.want {
			t.Errorf("%s: logged through %v, want %q", tc.name, lines, tc.want)
		}
	}
}
