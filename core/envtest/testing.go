package envtest

import (
	"testing"
)

// StartForTest starts a fleet with the given members and stops it when the test ends. It
// fails the test at once, with the reason (for example the command that builds missing
// binaries), if the fleet does not start.
func StartForTest(t testing.TB, members ...string) *Fleet {
	t.Helper()
	return StartForTestWithOptions(t, Options{Members: members})
}

// StartForTestWithOptions is StartForTest with full Options.
func StartForTestWithOptions(t testing.TB, opts Options) *Fleet {
	t.Helper()
	f, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("starting envtest fleet: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Stop(); err != nil {
			t.Errorf("stopping envtest fleet: %v", err)
		}
	})
	return f
}
