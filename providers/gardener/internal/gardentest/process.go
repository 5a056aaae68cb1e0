// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardentest

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"mcr.dev/core/envtest"
)

// waitOK waits until url answers 200 OK to hc, p exits or ctx ends.
func waitOK(ctx context.Context, p *envtest.Process, hc *http.Client, url string) error {
	return p.WaitUntil(ctx, func() error { return envtest.ProbeOK(ctx, hc, url) })
}

// httpClient returns a client for probes with the given TLS configuration (nil: plain HTTP).
func httpClient(tlsConfig *tls.Config) *http.Client {
	return &http.Client{
		Transport: &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true},
		Timeout:   5 * time.Second,
	}
}

// writeFiles writes name -> content into dir, readable by the owner only.
func writeFiles(dir string, files map[string][]byte) error {
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// replaceFile writes data to path through a rename, so that a server watching path never reads
// it half written.
func replaceFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
