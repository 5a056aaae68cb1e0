package reconcileloop_test

import (
	"testing"
	"time"

	"mcr.dev/core/clusters"
	"mcr.dev/core/providers/reconcileloop"
)

func TestDurationsSetDefaults(t *testing.T) {
	var sync, minDelay, maxDelay, resync time.Duration
	reconcileloop.Durations{CacheSyncTimeout: &sync, RetryMinDelay: &minDelay, RetryMaxDelay: &maxDelay, ResyncPeriod: &resync}.SetDefaults()
	if sync != clusters.DefaultCacheSyncTimeout || minDelay != reconcileloop.DefaultRetryMinDelay ||
		maxDelay != reconcileloop.DefaultRetryMaxDelay || resync != reconcileloop.DefaultResyncPeriod {
		t.Errorf("defaults: %v %v %v %v", sync, minDelay, maxDelay, resync)
	}

	minDelay, maxDelay, resync = time.Hour, time.Minute, -time.Second
	reconcileloop.Durations{RetryMinDelay: &minDelay, RetryMaxDelay: &maxDelay, ResyncPeriod: &resync}.SetDefaults()
	if maxDelay != time.Hour {
		t.Errorf("RetryMaxDelay below RetryMinDelay became %v, want it raised to %v", maxDelay, time.Hour)
	}
	if resync != reconcileloop.DefaultResyncPeriod {
		t.Errorf("a negative ResyncPeriod became %v, want the default", resync)
	}
}
