// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// BuildInfo is always 1. Its labels say what the binary was built from: go_version, and
// core_version, conformance_version and provider_<name>_version for each mcr.dev module in the
// binary's build information (runtime/debug.ReadBuildInfo), so a fleet's replicas can be told
// apart by what they run. A module built from a local directory (go.work, a replace without
// version) shows "(devel)", as the go command reports it. Labels of modules the binary does not
// contain are absent.
var BuildInfo = prometheus.NewGauge(prometheus.GaugeOpts{
	Name:        "mcr_build_info",
	Help:        "Always 1; labels carry the Go version and the versions of the mcr.dev modules the binary was built with.",
	ConstLabels: buildInfoLabels(readBuildInfo()),
})

func init() {
	BuildInfo.Set(1)
	ctrlmetrics.Registry.MustRegister(BuildInfo)
}

func readBuildInfo() *debug.BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	return bi
}

// buildInfoLabels derives mcr_build_info's labels from bi, which may be nil (a binary built
// without module support).
func buildInfoLabels(bi *debug.BuildInfo) prometheus.Labels {
	labels := prometheus.Labels{"go_version": runtime.Version()}
	if bi == nil {
		return labels
	}
	if bi.GoVersion != "" {
		labels["go_version"] = bi.GoVersion
	}
	add := func(m *debug.Module) {
		if m == nil {
			return
		}
		name, ok := moduleLabel(m.Path)
		if !ok {
			return
		}
		version := m.Version
		if m.Replace != nil {
			// The code comes from the replacement: a local directory has no version.
			version = m.Replace.Version
		}
		if version == "" {
			version = "(devel)"
		}
		labels[name] = version
	}
	add(&bi.Main)
	for _, m := range bi.Deps {
		add(m)
	}
	return labels
}

// moduleLabel names the label of an mcr.dev module: core_version, conformance_version or
// provider_<name>_version. Other modules (examples, tools, everything outside mcr.dev) have none.
func moduleLabel(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "mcr.dev/")
	if !ok {
		return "", false
	}
	switch {
	case rest == "core" || rest == "conformance":
		return rest + "_version", true
	case strings.HasPrefix(rest, "providers/") && !strings.Contains(strings.TrimPrefix(rest, "providers/"), "/"):
		name := strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, strings.ToLower(strings.TrimPrefix(rest, "providers/")))
		return "provider_" + name + "_version", true
	}
	return "", false
}
