// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package scale

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// processSample is what the process costs at one moment, as the kernel and the Go runtime see
// it (Linux only: it reads /proc).
type processSample struct {
	rss        int64 // VmRSS of /proc/self/status, bytes
	heapInuse  int64 // runtime.MemStats.HeapInuse, bytes
	goroutines int
	tcp        int // TCP connections owned by the process, see tcpConnections
}

// sampleProcess takes a sample after a full GC that also returns freed memory to the OS, so that
// RSS and heap are compared at their floor, not at wherever the last GC cycle left them.
func sampleProcess(tb testing.TB) processSample {
	tb.Helper()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, err := statusBytes("/proc/self/status", "VmRSS:")
	if err != nil {
		tb.Fatal(err)
	}
	tcp, err := tcpConnections()
	if err != nil {
		tb.Fatal(err)
	}
	return processSample{rss: rss, heapInuse: int64(ms.HeapInuse), goroutines: runtime.NumGoroutine(), tcp: tcp}
}

// statusBytes reads a "<key> <n> kB" line of a /proc/<pid>/status file.
func statusBytes(path, key string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, key); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parsing %q of %s: %w", line, path, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("%s has no %s line", path, key)
}

// tcpConnections counts the process's TCP sockets that are not listening: the socket inodes of
// /proc/self/fd matched against /proc/self/net/tcp and tcp6 (which list every socket of the
// network namespace, the apiservers' included, so the inode is what makes one ours).
func tcpConnections() (int, error) {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, fmt.Errorf("listing file descriptors: %w", err)
	}
	inodes := map[string]bool{}
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil {
			continue // closed since ReadDir
		}
		if inode, ok := strings.CutPrefix(target, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	n := 0
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			return 0, fmt.Errorf("reading %s: %w", table, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Scan() // header
		for sc.Scan() {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			const listen = "0A"
			if len(fields) > 9 && fields[3] != listen && inodes[fields[9]] {
				n++
			}
		}
	}
	return n, nil
}

// cpuTime is the CPU time (user and system) the process has used so far, its threads included
// and its children (the apiservers) not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childRSS sums the VmRSS of this process's children named comm (the kube-apiservers), which
// is memory the benchmarks cause but that is not the process's own.
func childRSS(comm string) int64 {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	self := strconv.Itoa(os.Getpid())
	var total int64
	for _, dir := range dirs {
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so split after the last ')'.
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if s[open+1:end] != comm || len(fields) < 2 || fields[1] != self {
			continue
		}
		if rss, err := statusBytes(filepath.Join(dir, "status"), "VmRSS:"); err == nil {
			total += rss
		}
	}
	return total
}

// TestProcessSample checks the measurements the benchmarks rely on: a connection opened by the
// process is counted (both of its ends, as both are ours), and memory and goroutines read as
// plausible values.
func TestProcessSample(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	before := sampleProcess(t)
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	accepted, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer accepted.Close()
	after := sampleProcess(t)
	if got := after.tcp - before.tcp; got != 2 {
		t.Errorf("one loopback connection changed the TCP count by %d, want 2 (its two ends)", got)
	}
	if after.rss < 1<<20 || after.heapInuse < 1<<10 || after.goroutines < 1 {
		t.Errorf("implausible sample %+v", after)
	}
	start := cpuTime()
	spins := 0
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
		spins++
	}
	if used := cpuTime() - start; used <= 0 || spins == 0 {
		t.Errorf("busy loop used %v CPU time, want more than zero", used)
	}
}
