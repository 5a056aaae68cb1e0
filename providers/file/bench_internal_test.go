// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// BenchmarkRescan measures what a reload costs when nothing changed: listing, reading and
// resolving every context and comparing its credentials, without creating any cluster. That is
// the work every file system event (after debouncing) and every resync does.
func BenchmarkRescan(b *testing.B) {
	for _, contexts := range []int{10, 100} {
		b.Run(fmt.Sprintf("contexts=%d", contexts), func(b *testing.B) {
			dir := b.TempDir()
			const perFile = 5
			for f := range contexts / perFile {
				cfg := clientcmdapi.NewConfig()
				for c := range perFile {
					name := fmt.Sprintf("ctx-%d", c)
					cfg.Clusters[name] = &clientcmdapi.Cluster{Server: fmt.Sprintf("https://10.0.%d.%d:6443", f, c), CertificateAuthorityData: []byte("ca")}
					cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: fmt.Sprintf("token-%d-%d", f, c)}
					cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
				}
				data, err := clientcmd.Write(*cfg)
				if err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.kubeconfig", f)), data, 0o600); err != nil {
					b.Fatal(err)
				}
			}
			p, err := New(Options{Dirs: []string{dir}})
			if err != nil {
				b.Fatal(err)
			}
			prev := p.scan(nil).byFile
			b.ResetTimer()
			for b.Loop() {
				res := p.scan(prev)
				changed := 0
				for file, specs := range res.byFile {
					for name, spec := range specs {
						if !sameCredentials(prev[file][name], spec) {
							changed++
						}
					}
				}
				if changed != 0 {
					b.Fatalf("%d contexts look changed although no file changed", changed)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(contexts), "µs/context")
		})
	}
}
