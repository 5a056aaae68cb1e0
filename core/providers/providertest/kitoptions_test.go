// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest_test

import (
	"testing"
	"time"

	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
)

func TestTestKitOptions(t *testing.T) {
	var logs providertest.LogBuffer
	o := providertest.TestKitOptions(kit.Options{CacheSyncTimeout: time.Second}, &logs)
	if o.CacheSyncTimeout != time.Second || o.RetryMinDelay != 100*time.Millisecond || o.RetryMaxDelay != 2*time.Second {
		t.Errorf("TestKitOptions = %+v; want the given CacheSyncTimeout and retries from 100ms to 2s", o)
	}
	o.Logger.Info("hello")
	if !logs.Contains("hello") {
		t.Errorf("the Logger does not write to logs: %q", logs.Lines())
	}
	if o := providertest.TestKitOptions(kit.Options{}, nil); o.CacheSyncTimeout != 20*time.Second || o.Logger.GetSink() != nil {
		t.Errorf("TestKitOptions without logs = %+v; want the default CacheSyncTimeout and no Logger", o)
	}
}

func TestRestartKitOptions(t *testing.T) {
	if o := providertest.RestartKitOptions(); o.CacheSyncTimeout != providertest.RestartCacheSyncTimeout || o.RetryMaxDelay != 2*time.Second {
		t.Errorf("RestartKitOptions = %+v; want CacheSyncTimeout RestartCacheSyncTimeout and short retries", o)
	}
}
