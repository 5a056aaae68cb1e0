// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package sharding

import (
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"
)

func TestOptionsDefaults(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "team-a")
	o, err := Options{Group: "g", Config: &rest.Config{}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.Namespace != "team-a" {
		t.Errorf("Namespace = %q, want $POD_NAMESPACE", o.Namespace)
	}
	if o.LeaseDuration != 15*time.Second || o.RenewDeadline != 10*time.Second || o.RenewInterval != 5*time.Second || o.RetryPeriod != time.Second {
		t.Errorf("durations = %v/%v/%v/%v, want 15s/10s/5s/1s", o.LeaseDuration, o.RenewDeadline, o.RenewInterval, o.RetryPeriod)
	}
	if o.Weight != 1 {
		t.Errorf("Weight = %v, want 1", o.Weight)
	}
	if o.Logger.GetSink() == nil {
		t.Error("no default logger")
	}
	var logged []string
	deprecatedLog := funcr.New(func(_, args string) { logged = append(logged, args) }, funcr.Options{})
	deprecated, err := Options{Group: "g", Config: &rest.Config{}, Log: deprecatedLog}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	deprecated.Logger.Info("probe")
	if len(logged) != 1 {
		t.Errorf("the deprecated Log got %d lines, want the one logged through Logger", len(logged))
	}
	other, err := Options{Group: "g", Config: &rest.Config{}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.Identity == other.Identity || !strings.Contains(o.Identity, "_") {
		t.Errorf("default identities %q and %q must be distinct and carry a random suffix", o.Identity, other.Identity)
	}

	short, err := Options{Group: "g", Config: &rest.Config{}, LeaseDuration: 2 * time.Second}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if short.RenewInterval >= short.RenewDeadline || short.RenewDeadline >= short.LeaseDuration || short.RetryPeriod > short.RenewInterval {
		t.Errorf("derived durations out of order: %+v", short)
	}
}

func TestOptionsValidation(t *testing.T) {
	cfg := &rest.Config{}
	for name, o := range map[string]Options{
		"no group":                 {Config: cfg},
		"no config":                {Group: "g"},
		"negative weight":          {Group: "g", Config: cfg, Weight: -1},
		"deadline beyond duration": {Group: "g", Config: cfg, LeaseDuration: time.Second, RenewDeadline: time.Second},
		"interval beyond deadline": {Group: "g", Config: cfg, RenewDeadline: time.Second, RenewInterval: 2 * time.Second},
	} {
		if _, err := o.withDefaults(); err == nil {
			t.Errorf("%s: options accepted", name)
		}
	}
}
