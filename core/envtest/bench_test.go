// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkMemberStart measures what one member costs: the time from AddMember to a ready
// kube-apiserver, and the memory of that apiserver and of the shared etcd.
//
//	go test -run '^$' -bench BenchmarkMemberStart -benchtime 5x ./envtest/
//
// Metrics: start-s (seconds from AddMember until /readyz and the default namespace answer),
// apiserver-rss-MiB (VmRSS right after ready; it stays flat afterwards while idle),
// apiserver-peak-MiB (VmHWM, the high-water mark of the start), etcd-rss-MiB (VmRSS of the
// shared etcd after all starts).
func BenchmarkMemberStart(b *testing.B) {
	f, err := Start(b.Context(), Options{TempDir: b.TempDir()})
	if err != nil {
		b.Fatalf("Start: %v", err)
	}
	b.Cleanup(func() {
		if err := f.Stop(); err != nil {
			b.Errorf("Stop: %v", err)
		}
	})

	var startTotal time.Duration
	var rssTotal, peakTotal int64
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("bench-%d", i)
		i++
		start := time.Now()
		m, err := f.AddMember(b.Context(), name)
		if err != nil {
			b.Fatalf("AddMember: %v", err)
		}
		startTotal += time.Since(start)

		b.StopTimer()
		rss, peak, err := memoryStatus(m.proc.Load().Pid())
		if err != nil {
			b.Fatal(err)
		}
		rssTotal += rss
		peakTotal += peak
		if err := f.RemoveMember(name); err != nil {
			b.Fatalf("RemoveMember: %v", err)
		}
		b.StartTimer()
	}
	n := float64(i)
	const mib = 1 << 20
	b.ReportMetric(startTotal.Seconds()/n, "start-s")
	b.ReportMetric(float64(rssTotal)/n/mib, "apiserver-rss-MiB")
	b.ReportMetric(float64(peakTotal)/n/mib, "apiserver-peak-MiB")
	etcdRSS, _, err := memoryStatus(f.etcd.Pid())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(etcdRSS)/mib, "etcd-rss-MiB")
}

// BenchmarkFleetStart measures Start of a whole fleet (etcd plus N members started
// concurrently) until every member is ready, and Stop.
//
//	go test -run '^$' -bench BenchmarkFleetStart -benchtime 3x ./envtest/
func BenchmarkFleetStart(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) {
			names := make([]string, n)
			for i := range names {
				names[i] = fmt.Sprintf("m%d", i)
			}
			var startTotal, stopTotal time.Duration
			runs := 0
			for b.Loop() {
				start := time.Now()
				f, err := Start(b.Context(), Options{Members: names, TempDir: b.TempDir()})
				if err != nil {
					b.Fatalf("Start: %v", err)
				}
				startTotal += time.Since(start)
				start = time.Now()
				if err := f.Stop(); err != nil {
					b.Fatalf("Stop: %v", err)
				}
				stopTotal += time.Since(start)
				runs++
			}
			b.ReportMetric(startTotal.Seconds()/float64(runs), "start-s")
			b.ReportMetric(stopTotal.Seconds()/float64(runs), "stop-s")
		})
	}
}
