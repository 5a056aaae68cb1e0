// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"mcr.dev/core/clusters"
	"mcr.dev/core/providers/kit"
)

func TestOptionsSetDefaults(t *testing.T) {
	var o kit.Options
	o.SetDefaults("test-provider")
	if o.CacheSyncTimeout != clusters.DefaultCacheSyncTimeout || o.RetryMinDelay != kit.DefaultRetryMinDelay ||
		o.RetryMaxDelay != kit.DefaultRetryMaxDelay || o.ResyncPeriod != kit.DefaultResyncPeriod {
		t.Errorf("defaults: %v %v %v %v", o.CacheSyncTimeout, o.RetryMinDelay, o.RetryMaxDelay, o.ResyncPeriod)
	}
	if o.Logger.GetSink() == nil {
		t.Error("Logger has no sink after SetDefaults")
	}

	o = kit.Options{RetryMinDelay: time.Hour, RetryMaxDelay: time.Minute, ResyncPeriod: -time.Second}
	o.SetDefaults("test-provider")
	if o.RetryMaxDelay != time.Hour {
		t.Errorf("RetryMaxDelay below RetryMinDelay became %v, want it raised to %v", o.RetryMaxDelay, time.Hour)
	}
	if o.ResyncPeriod != kit.DefaultResyncPeriod {
		t.Errorf("a negative ResyncPeriod became %v, want the default", o.ResyncPeriod)
	}
	o = kit.Options{ResyncPeriod: time.Minute}
	o.SetDefaults("test-provider")
	if o.ResyncPeriod != time.Minute {
		t.Errorf("a set ResyncPeriod became %v", o.ResyncPeriod)
	}
}

// TestOptionsSetDefaultsOnce: the kit's own calls (Members.Init, NewEngine) after a provider's
// withDefaults change nothing, so defaults are applied once per construction.
func TestOptionsSetDefaultsOnce(t *testing.T) {
	var o kit.Options
	o.SetDefaults("test-provider")
	o.RetryMinDelay = 0
	copied := o
	copied.SetDefaults("test-provider")
	if copied.RetryMinDelay != 0 {
		t.Errorf("a second SetDefaults on defaulted options set RetryMinDelay to %v", copied.RetryMinDelay)
	}
}

func TestOptionsRESTConfig(t *testing.T) {
	o := kit.Options{RESTOptions: []func(*rest.Config) error{
		func(c *rest.Config) error { c.UserAgent = "test"; return nil },
	}}
	in := &rest.Config{Host: "https://example.invalid"}
	cfg, err := o.RESTConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QPS != kit.DefaultQPS || cfg.Burst != kit.DefaultBurst || cfg.UserAgent != "test" {
		t.Errorf("got QPS %v, Burst %v, UserAgent %q", cfg.QPS, cfg.Burst, cfg.UserAgent)
	}
	if in.UserAgent != "" || in.QPS != 0 {
		t.Error("RESTConfig changed its input; it must work on a copy")
	}
	cfg, _ = (&kit.Options{}).RESTConfig(&rest.Config{Burst: 7})
	if cfg.QPS != 0 || cfg.Burst != 7 {
		t.Errorf("a config that sets Burst got QPS %v, Burst %v; want it unchanged", cfg.QPS, cfg.Burst)
	}
	errBad := errors.New("bad")
	o.RESTOptions = append(o.RESTOptions, func(*rest.Config) error { return errBad })
	_, err = o.RESTConfig(&rest.Config{})
	if !errors.Is(err, errBad) || !strings.Contains(err.Error(), "Options.RESTOptions[1]") {
		t.Errorf("error = %v, want it to wrap the option's error and name Options.RESTOptions[1]", err)
	}
}
