// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"fmt"
	"slices"
)

// needs lists, per test, the core rules it builds on. When one of them failed earlier in the
// run, the test is skipped, naming that failure, instead of waiting out its timeouts for a
// symptom of the same bug (Options.RunDependents runs it anyway). Only core tests are
// dependencies, and only where the dependent cannot pass without them: a provider that does
// not engage added members cannot be indexed, rotated or scaled; one that does not disengage
// deleted members cannot pass a test that deletes members to observe something else.
var needs = map[string][]string{
	GetReturnsEngaged:            {EngageOnAdd},
	EngageContextLifetime:        {EngageOnAdd},
	NoReengageOnUpdate:           {EngageOnAdd},
	DisengageOnDelete:            {EngageOnAdd},
	IndexExistingClusters:        {EngageOnAdd},
	IndexFutureClusters:          {EngageOnAdd, EngagePreexisting},
	IndexIsolation:               {EngageOnAdd},
	CacheSyncedAtEngage:          {EngageOnAdd, EngagePreexisting},
	NameStability:                {EngagePreexisting},
	ConcurrentGet:                {EngageOnAdd, DisengageOnDelete},
	NoGoroutineLeak:              {EngageOnAdd, DisengageOnDelete},
	ReengageOnCredentialRotation: {EngageOnAdd},
	DisengageWhenUnready:         {EngageOnAdd, DisengageOnDelete},
	ReengageWhenReady:            {EngageOnAdd, DisengageOnDelete},
	RetryAfterEngageError:        {EngageOnAdd},
	ScaleEngageDisengage:         {EngageOnAdd, DisengageOnDelete},
	NoDelayBehindUnresponsive:    {EngageOnAdd},
	NoCredentialsReported:        {EngageOnAdd},
	SurvivesSourceRestart:        {EngagePreexisting, DisengageOnDelete},
	NoReengageOnResync:           {EngageOnAdd},
	RepeatedCredentialRotation:   {EngageOnAdd},
	ServedAcrossResyncs:          {EngageOnAdd},
	ReengageOnServerChange:       {EngageOnAdd},
}

// dependencySkipPrefix starts the message of a test skipped because a rule it needs failed.
const dependencySkipPrefix = "not run: it needs "

// failedDependency returns why t is skipped because a core rule it needs failed earlier in
// this run, "" when none did.
func (r *suiteRun) failedDependency(t Test) string {
	if r.opts.RunDependents {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range needs[t.ID] {
		if res := r.results[id]; res.Result == Failed && slices.ContainsFunc(catalog, func(c Test) bool { return c.ID == id && c.Feature == Core }) {
			return fmt.Sprintf("%s%s, which failed: %s", dependencySkipPrefix, id, noteOf(res.Message))
		}
	}
	return ""
}
