// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package scale

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/envtest"
)

func TestMain(m *testing.M) {
	if os.Getenv("MCR_SCALE_PROFILES") != "" {
		// The default (one sample per 512 KiB) is too coarse to attribute a third of a MiB per
		// cluster; set before anything is allocated.
		runtime.MemProfileRate = 4096
	}
	log.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	code := m.Run()
	if err := stopFleet(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// The fleet starts on first use and grows to as many members as a test asks for: a test run
// without -bench needs one apiserver, BenchmarkScale four.
var (
	fleetMu sync.Mutex
	fleet   *envtest.Fleet
)

// apiservers returns the first n members of the shared fleet, starting the fleet or adding
// members as needed. Members are named m0, m1, ...
func apiservers(tb testing.TB, n int) []*envtest.Member {
	tb.Helper()
	fleetMu.Lock()
	defer fleetMu.Unlock()
	ctx := context.Background()
	if fleet == nil {
		f, err := envtest.Start(ctx, envtest.Options{})
		if err != nil {
			tb.Fatalf("starting the fleet: %v", err)
		}
		fleet = f
	}
	members := fleet.Members()
	if missing := n - len(members); missing > 0 {
		added := make([]*envtest.Member, missing)
		errs := make([]error, missing)
		var wg sync.WaitGroup
		for i := range missing {
			wg.Go(func() {
				added[i], errs[i] = fleet.AddMember(ctx, fmt.Sprintf("m%d", len(members)+i))
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				tb.Fatalf("adding a member: %v", err)
			}
		}
		members = fleet.Members()
	}
	return members[:n]
}

func stopFleet() error {
	fleetMu.Lock()
	defer fleetMu.Unlock()
	if fleet == nil {
		return nil
	}
	if err := fleet.Stop(); err != nil {
		return fmt.Errorf("stopping the fleet: %w", err)
	}
	return nil
}

// adminClient returns an admin client of m on a transport of its own and a function that
// closes its connections. Setup traffic must not stay in client-go's shared transport cache:
// its pooled connections and their goroutines would count as the cost of the clusters measured.
func adminClient(tb testing.TB, m *envtest.Member) (client.Client, func()) {
	tb.Helper()
	cfg := m.Config()
	cfg.QPS, cfg.Burst = -1, 0 // setup writes thousands of objects; no client-side throttling
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		tb.Fatalf("TLS config of %s: %v", m.Name(), err)
	}
	transport := &http.Transport{TLSClientConfig: tlsConfig, ForceAttemptHTTP2: true}
	c, err := client.New(cfg, client.Options{HTTPClient: &http.Client{Transport: transport}})
	if err != nil {
		tb.Fatalf("client for %s: %v", m.Name(), err)
	}
	return c, transport.CloseIdleConnections
}
