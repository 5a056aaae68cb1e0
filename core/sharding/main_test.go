package sharding_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/envtest"
)

// fleet is shared by the tests of this package: "host" holds the Leases, "a" and "b" back the
// clusters offered to the replicas.
var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	ctrllog.SetLogger(testLogger())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	f, err := envtest.Start(ctx, envtest.Options{Members: []string{"host", "a", "b"}})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fleet = f
	code := m.Run()
	if err := f.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}
