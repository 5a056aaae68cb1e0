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
// Metrics: start-s (seconds until /readyz ok), apiserver-rss-MiB (resident memory right after
// ready), apiserver-settled-rss-MiB (resident memory 5 seconds later, when start-up
// controllers have run), apiserver-peak-MiB (VmHWM), etcd-rss-MiB (after all starts).
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
	var rssTotal, settledTotal, peakTotal int64
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
		pid := m.proc.Load().pid()
		rss, _, err := memoryStatus(pid)
		if err != nil {
			b.Fatal(err)
		}
		// Settling is measured with a fixed wait on purpose: it is a reading, not an assertion.
		time.Sleep(5 * time.Second)
		settled, peak, err := memoryStatus(pid)
		if err != nil {
			b.Fatal(err)
		}
		rssTotal += rss
		settledTotal += settled
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
	b.ReportMetric(float64(settledTotal)/n/mib, "apiserver-settled-rss-MiB")
	b.ReportMetric(float64(peakTotal)/n/mib, "apiserver-peak-MiB")
	etcdRSS, _, err := memoryStatus(f.etcd.pid())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(etcdRSS)/mib, "etcd-rss-MiB")
}
