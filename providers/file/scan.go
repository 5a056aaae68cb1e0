// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file

import (
	"strings"

	"mcr.dev/core/multicluster"
)

// contextError is a context that cannot be used.
type contextError struct {
	file, context string
	err           error
}

// scanResult is what one pass over the configured paths found.
type scanResult struct {
	// byFile holds the usable specs of each file; for a broken file or context, the last usable
	// ones, so that a typo does not take clusters away.
	byFile      map[string]map[multicluster.ClusterName]*clusterSpec
	fileErrs    map[string]error
	contextErrs map[multicluster.ClusterName]contextError
	watch       map[string]struct{}
}

// scan reads every kubeconfig; prev is the previous result's byFile (nil for none).
func (p *Provider) scan(prev map[string]map[multicluster.ClusterName]*clusterSpec) scanResult {
	l := p.src.list()
	res := scanResult{
		byFile:      map[string]map[multicluster.ClusterName]*clusterSpec{},
		fileErrs:    l.errs,
		contextErrs: map[multicluster.ClusterName]contextError{},
		watch:       l.watch,
	}
	for _, path := range l.files {
		r := p.loader.load(path, l.explicit[path])
		if r.err != nil {
			res.fileErrs[path] = r.err
			if old, ok := prev[path]; ok {
				res.byFile[path] = old
			}
			continue
		}
		specs := map[multicluster.ClusterName]*clusterSpec{}
		for _, spec := range r.contexts {
			specs[spec.name] = spec
		}
		for context, err := range r.contextErrs {
			name := clusterName(p.loader.base, p.loader.separator, path, context)
			res.contextErrs[name] = contextError{file: path, context: context, err: err}
			if old, ok := prev[path][name]; ok {
				specs[name] = old
			}
		}
		res.byFile[path] = specs
	}
	for _, specs := range res.byFile {
		for _, spec := range specs {
			for _, dir := range spec.refDirs {
				res.watch[nearestDir(dir)] = struct{}{}
			}
		}
	}
	return res
}

// report logs the problems of files and contexts when they appear, change or go away, and counts
// them every time. They are problems of the files, which the Engine does not know: a broken file
// or context keeps its clusters engaged as they were.
func (p *Provider) report(res scanResult) {
	log := p.opts.Logger
	seen := map[string]struct{}{}
	for path, err := range res.fileErrs {
		LoadErrors.WithLabelValues(fileLabel(path), reason(err)).Inc()
		key := "file:" + path
		seen[key] = struct{}{}
		if p.reported[key] != err.Error() {
			p.reported[key] = err.Error()
			log.Error(err, "Cannot use kubeconfig file; its clusters stay as they were until it is fixed or deleted", "file", path)
		}
	}
	for name, ce := range res.contextErrs {
		LoadErrors.WithLabelValues(fileLabel(ce.file), reason(ce.err)).Inc()
		key := "cluster:" + string(name)
		seen[key] = struct{}{}
		if p.reported[key] != ce.err.Error() {
			p.reported[key] = ce.err.Error()
			log.Error(ce.err, "Cannot use kubeconfig context; its cluster stays as it was until it is fixed or removed",
				"cluster", name, "file", ce.file, "context", ce.context)
		}
	}
	for key := range p.reported {
		if _, ok := seen[key]; !ok {
			delete(p.reported, key)
			if path, ok := strings.CutPrefix(key, "file:"); ok {
				log.Info("Kubeconfig file problem resolved (fixed or deleted)", "file", path)
			} else {
				log.Info("Kubeconfig context problem resolved (fixed or removed)", "cluster", strings.TrimPrefix(key, "cluster:"))
			}
		}
	}
	BrokenFiles.Add(float64(len(res.fileErrs) - p.broken))
	p.broken = len(res.fileErrs)
}
