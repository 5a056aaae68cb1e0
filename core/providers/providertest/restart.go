// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
)

// DefaultRestartRecovery is how long RunRestartTest waits, after the host is back, for a member
// added or removed then: client-go's reflectors back off up to 30 s, with jitter up to twice
// that, while the host is down, so their next attempt may come a minute after the restart.
const DefaultRestartRecovery = 90 * time.Second

// RestartCacheSyncTimeout is the CacheSyncTimeout of RestartKitOptions, and of a RestartTest that
// sets none: short, so that the outage, twice as long, is short too.
const RestartCacheSyncTimeout = 5 * time.Second

// RestartKitOptions are the kit options of a provider under RunRestartTest: CacheSyncTimeout
// RestartCacheSyncTimeout, and retries short enough to catch up soon after the host is back.
func RestartKitOptions() kit.Options {
	return TestKitOptions(kit.Options{CacheSyncTimeout: RestartCacheSyncTimeout}, nil)
}

// RestartFleet is the fleet RunRestartTest starts for a RestartTest: one of its own, since a
// host outage would disturb every other test sharing a fleet.
type RestartFleet struct {
	// Host is the apiserver the providers discover their members from, the one that stops.
	Host *envtest.Member
	// Member is an apiserver that stays up, for the members' kubeconfigs to reach.
	Member *envtest.Member
	// Namespace is a namespace of Host for the source of truth.
	Namespace string
	// Client is an admin client of Host with RestartTest.Scheme.
	Client client.Client
}

// Delete returns a RestartSubject.Remove that deletes, through Client, the object of obj's kind
// named after the member in Namespace (ignored for a cluster-scoped kind): the usual removal,
// where a member is one object of the source of truth.
func (f RestartFleet) Delete(obj client.Object) func(ctx context.Context, name string) error {
	return func(ctx context.Context, name string) error {
		o, ok := obj.DeepCopyObject().(client.Object)
		if !ok {
			return fmt.Errorf("deleting member %s: %T is not a client.Object", name, obj)
		}
		o.SetNamespace(f.Namespace)
		o.SetName(name)
		return f.Client.Delete(ctx, o)
	}
}

// RestartSubject is one provider of a RestartTest, with how its members are added and removed on
// the host. The member names RunRestartTest passes are "stays", "goes" and "added".
type RestartSubject struct {
	// New builds the provider under test with kit options o (RestartKitOptions, with the
	// test's CacheSyncTimeout); RunRestartTest starts it.
	New func(o kit.Options) (Provider, error)
	// Add creates on the host a member the provider engages, and returns the name it engages
	// it under.
	Add func(ctx context.Context, name string) (multicluster.ClusterName, error)
	// Remove deletes from the host the member Add created as name (see RestartFleet.Delete).
	Remove func(ctx context.Context, name string) error
}

// RestartTest is a host restart: the apiserver a provider discovers its members from stops, while
// members are engaged, for twice CacheSyncTimeout, and starts again.
type RestartTest struct {
	// Scheme is the scheme of RestartFleet.Client, with the types of the provider's source of
	// truth. Default: client-go's.
	Scheme *runtime.Scheme
	// Install, when set, prepares the host before Subjects runs (installs the CRDs of the
	// provider's source of truth, say).
	Install func(ctx context.Context, host *rest.Config) error
	// Subjects returns the providers that read f.Host (several, when a provider has several
	// topologies over one host). It may fail t.
	Subjects func(t *testing.T, f RestartFleet) []RestartSubject
	// CacheSyncTimeout is the providers' kit.Options.CacheSyncTimeout: the outage lasts twice as
	// long, so that anything bounded by it gives up. Default: RestartCacheSyncTimeout.
	CacheSyncTimeout time.Duration
	// Wait bounds the engagements before the outage and the providers' shutdown. Default:
	// DefaultRestartRecovery.
	Wait time.Duration
	// Recovery bounds the engagement and disengagement after the restart. Default:
	// DefaultRestartRecovery.
	Recovery time.Duration
	// MemberWorks checks after the outage that a member engaged before it still answers (its
	// apiserver never stopped). Default: MemberAnswers.
	MemberWorks func(ctx context.Context, member cluster.Cluster) error
}

// MemberAnswers lists Namespaces through member's API reader, uncached, and counts a Forbidden
// answer as an answer: the member authenticated the request, and what the member's identity
// may read is up to the provider's user. Any other error is returned.
func MemberAnswers(ctx context.Context, member cluster.Cluster) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
	if err := member.GetAPIReader().List(ctx, list, client.Limit(1)); err != nil && !apierrors.IsForbidden(err) {
		return err
	}
	return nil
}

// restartSubject is a started subject and its engagements.
type restartSubject struct {
	RestartSubject
	Provider    Provider
	rec         *Recorder
	stays, goes multicluster.ClusterName
	staysEng    *Engagement
	goesEng     *Engagement
}

// RunRestartTest starts a fleet of its own ("host" and "member"), in parallel with the
// package's other tests, installs rt.Install on the host and starts every subject with members
// "stays" and "goes" engaged. It stops the host for twice CacheSyncTimeout, failing the test as
// soon as an engagement ends or Get stops returning the engaged cluster, checks that "stays"
// still works (MemberWorks) and starts the host again; then it adds "added" and removes "goes",
// and checks that each subject engages the one and disengages the other while "stays" keeps its
// single engagement.
func RunRestartTest(t *testing.T, rt RestartTest) {
	t.Helper()
	t.Parallel()
	if rt.Recovery == 0 {
		rt.Recovery = DefaultRestartRecovery
	}
	if rt.CacheSyncTimeout == 0 {
		rt.CacheSyncTimeout = RestartCacheSyncTimeout
	}
	if rt.Wait == 0 {
		rt.Wait = DefaultRestartRecovery
	}
	if rt.MemberWorks == nil {
		rt.MemberWorks = MemberAnswers
	}
	ctx := t.Context()
	fleet := envtest.StartForTest(t, "host", "member")
	host := fleet.Member("host")
	if rt.Install != nil {
		if err := rt.Install(ctx, host.Config()); err != nil {
			t.Fatalf("preparing the host: %v", err)
		}
	}
	f := RestartFleet{
		Host: host, Member: fleet.Member("member"),
		Namespace: envtest.NamespaceForTest(t, "restart", host),
		Client:    host.ClientForTest(t, client.Options{Scheme: rt.Scheme}),
	}
	opts := RestartKitOptions()
	opts.CacheSyncTimeout = rt.CacheSyncTimeout
	subjects := []*restartSubject{}
	for i, sub := range rt.Subjects(t, f) {
		p, err := sub.New(opts)
		if err != nil {
			t.Fatalf("building provider %d: %v", i, err)
		}
		s := &restartSubject{RestartSubject: sub, Provider: p, rec: Start(t, p, rt.Wait).Recorder}
		if s.stays, err = sub.Add(ctx, "stays"); err != nil {
			t.Fatalf("adding member stays: %v", err)
		}
		if s.goes, err = sub.Add(ctx, "goes"); err != nil {
			t.Fatalf("adding member goes: %v", err)
		}
		s.staysEng = s.rec.WaitEngaged(t, p, s.stays, rt.Wait)
		s.goesEng = s.rec.WaitEngaged(t, p, s.goes, rt.Wait)
		subjects = append(subjects, s)
	}

	if err := host.Stop(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = host.Start(context.Background())
		}
	})
	outage := 2 * rt.CacheSyncTimeout
	t.Logf("the host apiserver stopped for %s (CacheSyncTimeout %s)", outage, rt.CacheSyncTimeout)
	// The engagements must live through the whole outage, not only at its end.
	for deadline := time.Now().Add(outage); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		for _, s := range subjects {
			if err := s.engagedDuringOutage(ctx); err != nil {
				t.Fatalf("while the host was down: %v; engaged: %v", err, s.rec.Engaged())
			}
		}
	}
	for _, s := range subjects {
		if err := rt.MemberWorks(ctx, s.staysEng.Cluster); err != nil {
			t.Errorf("member %q stopped working while the host was down: %v", s.stays, err)
		}
	}
	if err := host.Start(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	back := time.Now()

	added := make([]multicluster.ClusterName, len(subjects))
	for i, s := range subjects {
		var err error
		if added[i], err = s.Add(ctx, "added"); err != nil {
			t.Fatalf("adding member added after the restart: %v", err)
		}
		if err := s.Remove(ctx, "goes"); err != nil {
			t.Fatalf("removing member goes after the restart: %v", err)
		}
	}
	for i, s := range subjects {
		s.rec.WaitEngaged(t, s.Provider, added[i], rt.Recovery)
		t.Logf("%q, added after the restart, was engaged %s after the host was back", added[i], time.Since(back).Round(100*time.Millisecond))
		s.rec.WaitDisengaged(t, s.Provider, s.goes, s.goesEng, rt.Recovery)
		t.Logf("%q, removed after the restart, was disengaged %s after the host was back", s.goes, time.Since(back).Round(100*time.Millisecond))
		if err := s.engagedOnce(ctx); err != nil {
			t.Error(err)
		}
	}
}

// engagedDuringOutage reports an engagement that ended or a Get that no longer returns it.
func (s *restartSubject) engagedDuringOutage(ctx context.Context) error {
	for name, e := range map[multicluster.ClusterName]*Engagement{s.stays: s.staysEng, s.goes: s.goesEng} {
		if !e.Alive() {
			return fmt.Errorf("%q was disengaged", name)
		}
		if cl, err := s.Provider.Get(ctx, name); err != nil || cl != e.Cluster {
			return fmt.Errorf("Get(%q) = %v, %v; want the engaged cluster", name, cl, err)
		}
	}
	return nil
}

// engagedOnce reports whether "stays" was disengaged or engaged again.
func (s *restartSubject) engagedOnce(ctx context.Context) error {
	if n := s.rec.Count(s.stays); !s.staysEng.Alive() || n != 1 {
		return fmt.Errorf("%q, engaged before the outage, was disengaged or engaged again (%d engagements)", s.stays, n)
	}
	if cl, err := s.Provider.Get(ctx, s.stays); err != nil || cl != s.staysEng.Cluster {
		return fmt.Errorf("%q, engaged before the outage, is not what Get returns: %v", s.stays, err)
	}
	return nil
}
