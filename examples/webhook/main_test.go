// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The demo on its embedded fleet: run fails unless every member decided as its own policy
// says; the output shows the decisions, each naming the cluster whose policy was read, and
// the configuration rendered for each member.
func TestWebhookOnEmbeddedFleet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := runCommand(ctx, []string{"-print-config"}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`fleet-a +red +denied: color red is forbidden in cluster fleet-a by shop/color-policy`),
		regexp.MustCompile(`fleet-a +blue +allowed \(checked in cluster fleet-a\)`),
		regexp.MustCompile(`fleet-b +red +allowed \(checked in cluster fleet-b\)`),
		regexp.MustCompile(`fleet-b +blue +denied: color blue is forbidden in cluster fleet-b`),
		regexp.MustCompile(`fleet-c +red +allowed \(checked in cluster fleet-c: no policy\)`),
		regexp.MustCompile(`url: https://127\.0\.0\.1:\d+/validate--v1-configmap/fleet-c`),
		regexp.MustCompile(`Registered the webhook in fleet-b: it calls https://127\.0\.0\.1:\d+/validate--v1-configmap/fleet-b`),
	} {
		if !want.MatchString(out.String()) {
			t.Errorf("the output does not match %s:\n%s", want, out.String())
		}
	}
	if !strings.HasSuffix(out.String(), "Done.\n") {
		t.Errorf("the demo did not finish:\n%s", out.String())
	}
}
