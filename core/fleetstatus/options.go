// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleetstatus

import (
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Defaults of Options.
const (
	DefaultConditionType    = "Synced"
	DefaultMinInterval      = time.Second
	DefaultMaxMessageLength = 512
	DefaultMaxSummaryLength = 1024
)

// Options configure an Aggregator. The zero value of every field selects its default, and
// withDefaults is the one place they are applied.
type Options struct {
	// ConditionType is the type of the per-cluster condition of a Result that names none.
	//
	// Defaults to DefaultConditionType ("Synced").
	ConditionType string

	// SummaryType is the type of the summary condition among the object's conditions.
	//
	// Defaults to "Fleet" followed by ConditionType ("FleetSynced").
	SummaryType string

	// MinInterval is the least time between two status writes of one hub object. A change
	// within it of the last write is not written at once: Update returns a RequeueAfter for the
	// end of the interval, and the reconcile then writes whatever the status is by that time,
	// so that a burst of changes becomes one write.
	//
	// Defaults to DefaultMinInterval (1s); a negative value writes every change at once.
	MinInterval time.Duration

	// MaxMessageLength bounds, in bytes, the message of each per-cluster condition; a longer
	// message is cut at a character boundary and ends in "...".
	//
	// Defaults to DefaultMaxMessageLength (512).
	MaxMessageLength int

	// MaxSummaryLength bounds, in bytes, the message of the summary condition. The clusters that
	// are not ready are listed until it is reached, then counted ("and 12 more").
	//
	// Defaults to DefaultMaxSummaryLength (1024).
	MaxSummaryLength int

	// APIReader reads the hub object again after a write lost to a concurrent one (a
	// conflict). Give the manager's API reader (GetAPIReader) when the client reads from a
	// cache, so that the retry does not see the same stale object.
	//
	// Defaults to the Aggregator's client.
	APIReader client.Reader

	// Clock gives the times of transitions and of writes.
	//
	// Defaults to the real clock.
	Clock clock.PassiveClock
}

// withDefaults returns o with every unset field set to its default.
func (o Options) withDefaults(c client.Client) Options {
	if o.ConditionType == "" {
		o.ConditionType = DefaultConditionType
	}
	if o.SummaryType == "" {
		o.SummaryType = "Fleet" + o.ConditionType
	}
	if o.MinInterval == 0 {
		o.MinInterval = DefaultMinInterval
	}
	if o.MaxMessageLength <= 0 {
		o.MaxMessageLength = DefaultMaxMessageLength
	}
	if o.MaxSummaryLength <= 0 {
		o.MaxSummaryLength = DefaultMaxSummaryLength
	}
	if o.APIReader == nil {
		o.APIReader = c
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return o
}
