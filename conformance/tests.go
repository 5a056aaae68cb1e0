// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import "slices"

// Test is one conformance test: a rule of the provider contract and the check that enforces it.
// The list of tests is data: the docs page docs/conformance-tests.md, the report and Verify are
// generated from it.
type Test struct {
	// ID is the test's stable name. IDs are never reused for a different rule.
	ID string `json:"id"`
	// Must is the rule, one sentence with MUST in it.
	Must string `json:"must"`
	// Feature is the feature the test needs: Core, or an extended feature the provider must
	// claim for the test to run.
	Feature Feature `json:"feature"`

	run func(*spec)
}

// Test IDs. They are stable: reports and docs refer to them.
const (
	EngageOnAdd                  = "EngageOnAdd"
	EngagePreexisting            = "EngagePreexisting"
	GetReturnsEngaged            = "GetReturnsEngaged"
	EngageContextLifetime        = "EngageContextLifetime"
	NoReengageOnUpdate           = "NoReengageOnUpdate"
	DisengageOnDelete            = "DisengageOnDelete"
	NotFoundForUnknown           = "NotFoundForUnknown"
	IndexExistingClusters        = "IndexExistingClusters"
	IndexFutureClusters          = "IndexFutureClusters"
	IndexIsolation               = "IndexIsolation"
	CacheSyncedAtEngage          = "CacheSyncedAtEngage"
	NameStability                = "NameStability"
	ConcurrentGet                = "ConcurrentGet"
	CleanStop                    = "CleanStop"
	NoGoroutineLeak              = "NoGoroutineLeak"
	ReengageOnCredentialRotation = "ReengageOnCredentialRotation"
	DisengageWhenUnready         = "DisengageWhenUnready"
	ReengageWhenReady            = "ReengageWhenReady"
	RetryAfterEngageError        = "RetryAfterEngageError"
	ScaleEngageDisengage         = "ScaleEngageDisengage"
	NoDelayBehindUnresponsive    = "NoDelayBehindUnresponsive"
	NoCredentialsReported        = "NoCredentialsReported"
	SurvivesSourceRestart        = "SurvivesSourceRestart"
	NoReengageOnResync           = "NoReengageOnResync"
	RepeatedCredentialRotation   = "RepeatedCredentialRotation"
	ReengageOnServerChange       = "ReengageOnServerChange"
	ServedAcrossResyncs          = "ServedAcrossResyncs"
)

// catalog is the ordered list of tests; Tests returns copies.
var catalog = []Test{
	{ID: EngageOnAdd, Feature: Core, run: testEngageOnAdd,
		Must: "A member added while the provider runs MUST be engaged exactly once, under the member's name, with a cluster that reaches that member."},
	{ID: EngagePreexisting, Feature: Core, run: testEngagePreexisting,
		Must: "Members that exist before the provider starts MUST be engaged after it starts."},
	{ID: GetReturnsEngaged, Feature: Core, run: testGetReturnsEngaged,
		Must: "Get MUST return the very cluster instance that was engaged under that name."},
	{ID: EngageContextLifetime, Feature: Core, run: testEngageContextLifetime,
		Must: "The engage context MUST stay alive while the member exists, also while other members come and go; it MUST NOT be scoped to a reconcile."},
	{ID: NoReengageOnUpdate, Feature: Core, run: testNoReengageOnUpdate,
		Must: "An update that does not change the member MUST NOT end its engage context or engage it again."},
	{ID: DisengageOnDelete, Feature: Core, run: testDisengageOnDelete,
		Must: "Deleting a member MUST end its engage context; Get MUST then return ErrClusterNotFound and the member MUST NOT be engaged again."},
	{ID: NotFoundForUnknown, Feature: Core, run: testNotFoundForUnknown,
		Must: "Get of an unknown name MUST return an error wrapping ErrClusterNotFound, before and after Start, and never (nil, nil)."},
	{ID: IndexExistingClusters, Feature: Core, run: testIndexExistingClusters,
		Must: "IndexField MUST apply the index to every cluster engaged when it is called."},
	{ID: IndexFutureClusters, Feature: Core, run: testIndexFutureClusters,
		Must: "Indexes added before Start or between engagements MUST apply to every cluster engaged later, each exactly once, without duplicate-index errors."},
	{ID: IndexIsolation, Feature: Core, run: testIndexIsolation,
		Must: "A field-indexed List on one cluster MUST return only that cluster's objects."},
	{ID: CacheSyncedAtEngage, Feature: Core, run: testCacheSyncedAtEngage,
		Must: "A member's cache MUST have synced when it is engaged: when Engage is called, an index registered before the member existed is in place, the informer it started has synced, and a List by it sees every object the member holds."},
	{ID: NameStability, Feature: Core, run: testNameStability,
		Must: "A new provider instance on the same source of truth (a restart) MUST engage every member under the same name, reaching the same member."},
	{ID: ConcurrentGet, Feature: Core, run: testConcurrentGet,
		Must: "Get MUST be safe to call concurrently with engagement and disengagement (race-free under -race) and return either a cluster or ErrClusterNotFound."},
	{ID: CleanStop, Feature: Core, run: testCleanStop,
		Must: "When its context ends, Start MUST return (nil or context.Canceled) and every engage context MUST be done."},
	{ID: NoGoroutineLeak, Feature: Core, run: testNoGoroutineLeak,
		Must: "Engaging and disengaging members repeatedly MUST NOT leave goroutines behind."},
	{ID: ReengageOnCredentialRotation, Feature: CredentialRotation, run: testReengageOnCredentialRotation,
		Must: "When a member's credentials change, the provider MUST either end the old engage context and engage a new cluster that uses the new credentials, or keep the engagement and switch it to the new credentials in place (which a provider claiming InPlaceCredentialRefresh MUST do, its cache and Get's answer kept); either way the member MUST be reached after the old credentials are revoked."},
	{ID: DisengageWhenUnready, Feature: MemberReadiness, run: testDisengageWhenUnready,
		Must: "A member that becomes unready MUST be disengaged and MUST NOT be engaged while it stays unready."},
	{ID: ReengageWhenReady, Feature: MemberReadiness, run: testReengageWhenReady,
		Must: "A member that becomes ready again MUST be engaged again."},
	{ID: RetryAfterEngageError, Feature: EngageErrorRecovery, run: testRetryAfterEngageError,
		Must: "When Engage fails, the provider MUST end that engage context and retry until the member is engaged."},
	{ID: ScaleEngageDisengage, Feature: Scale, run: testScaleEngageDisengage,
		Must: "The provider MUST engage, and then disengage, dozens of members added and removed at once."},
	{ID: NoDelayBehindUnresponsive, Feature: UnresponsiveMembers, run: testNoDelayBehindUnresponsiveMember,
		Must: "A member whose apiserver never answers MUST NOT delay the engagement of another member: a member added while the provider waits for the unresponsive one is engaged before that wait ends."},
	{ID: NoCredentialsReported, Feature: CredentialHygiene, run: testNoCredentialsReported,
		Must: "No credential of a member (bearer token, client key, password or token in the server URL) MUST appear in the provider's log output or Events, while it engages, fails to reach, rotates or removes members."},
	{ID: SurvivesSourceRestart, Feature: SourceRestart, run: testSurvivesSourceRestart,
		Must: "Through an outage of the source of truth, an unchanged member MUST stay engaged, once; after it, members added or deleted MUST be engaged or disengaged."},
	{ID: NoReengageOnResync, Feature: PeriodicResync, run: testNoReengageOnResync,
		Must: "A periodic resync of an unchanged source of truth MUST NOT end an engage context or engage a member again."},
	{ID: RepeatedCredentialRotation, Feature: CredentialRotation, run: testRepeatedCredentialRotation,
		Must: "Every one of several credential rotations in a row MUST be met as one rotation is (a new engagement that ends the old one, or a refresh in place), with a cluster that reaches the member after the old credentials are revoked and that Get returns after each."},
	{ID: ReengageOnServerChange, Feature: InPlaceCredentialRefresh, run: testReengageOnServerChange,
		Must: "When a member's server address changes and its credentials do not, a provider that refreshes credentials in place MUST still end the old engage context and engage a new cluster for the new address."},
	{ID: ServedAcrossResyncs, Feature: PeriodicResync, run: testServedAcrossResyncs,
		Must: "A member engaged for several resync periods MUST stay served: its engage context alive, Get returning its cluster, and that cluster's cache seeing objects written after the resyncs."},
}

// Tests returns the suite's tests in the order they run.
func Tests() []Test {
	out := slices.Clone(catalog)
	for i := range out {
		out[i].run = nil
	}
	return out
}

func testByID(id string) (Test, bool) {
	for _, t := range catalog {
		if t.ID == id {
			return t, true
		}
	}
	return Test{}, false
}
