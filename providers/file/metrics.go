// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file

import (
	"errors"
	"io/fs"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/providers/kit"
)

var (
	// LoadErrors counts failed reads of kubeconfig files and contexts, by file and reason. A file
	// that stays broken counts once per scan (on every change in its directory, and every
	// Options.ResyncPeriod), so its rate shows that it is still broken. Bytes of a file's path
	// that are not valid UTF-8 are U+FFFD in the label.
	LoadErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcr_file_provider_load_errors_total",
		Help: "Number of failed loads of kubeconfig files or contexts by the file provider, by file and reason.",
	}, []string{"file", "reason"})

	// BrokenFiles is the number of kubeconfig files (or configured paths) that cannot be used at
	// the moment, summed over the file providers of the process.
	BrokenFiles = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcr_file_provider_broken_files",
		Help: "Number of kubeconfig files or configured paths the file provider cannot use at the moment.",
	})
)

// Errors counts failed attempts to engage a usable context, by reason (the kit's reasons:
// ClusterUnreachable, Unauthorized, ClusterSetupFailed, ...), as
// mcr_file_provider_errors_total{reason}; BrokenClusters is the number of such contexts that
// cannot be engaged at the moment, mcr_file_provider_broken_clusters. Problems of the files
// themselves count in LoadErrors and BrokenFiles.
var Errors, BrokenClusters = kit.RegisterMetrics(providerName, "clusters") //nolint:revive // one call creates and registers both

func init() {
	ctrlmetrics.Registry.MustRegister(LoadErrors, BrokenFiles)
}

// Reasons of mcr_file_provider_load_errors_total besides those of kubeconfig.Reason.
const (
	reasonEmpty      = "EmptyFile"
	reasonNotFound   = "FileNotFound"
	reasonNotRegular = "NotRegularFile"
	reasonTooLarge   = "FileTooLarge"
	reasonIO         = "ReadError"
)

// fileLabel is the file label of LoadErrors for path. Label values must be valid UTF-8 (the
// metric panics otherwise), and file names are bytes: invalid bytes become U+FFFD.
func fileLabel(path string) string { return strings.ToValidUTF8(path, "\uFFFD") }

// reason classifies a load error for the metric.
func reason(err error) string {
	switch {
	case errors.Is(err, errEmptyFile):
		return reasonEmpty
	case errors.Is(err, fs.ErrNotExist):
		return reasonNotFound
	case errors.Is(err, errNotRegular):
		return reasonNotRegular
	case errors.Is(err, errTooLarge):
		return reasonTooLarge
	}
	if r := kubeconfig.Reason(err); r != "" {
		return r
	}
	return reasonIO
}
