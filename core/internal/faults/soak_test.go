// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "mcr.dev/core/builder"
	"mcr.dev/core/internal/testcheck"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	mcreconcile "mcr.dev/core/reconcile"
)

// soakDuration is how long TestSoak runs its faults, from MCR_SOAK_DURATION (a Go duration);
// `make test` runs the default, `make soak` five minutes.
func soakDuration(t *testing.T) time.Duration {
	v := os.Getenv("MCR_SOAK_DURATION")
	if v == "" {
		return time.Minute
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("MCR_SOAK_DURATION: %v", err)
	}
	return d
}

// reconciledIn is the annotation the soak's reconciler writes on every ConfigMap: the cluster
// of the request that reconciled it.
const reconciledIn = "faults.mcr.dev/reconciled-in"

var soakMembers = []string{"a", "b", "c"}

// A controller reconciles ConfigMaps in three members while, at random, members are stopped
// and started again, their credentials are rotated (half of the time through a write the
// provider refuses first), and they are removed from the provider and added back, and writers
// create and change ConfigMaps in every member. At the end: every object's last version was
// reconciled, every object carries the name of its own cluster (the reconciler wrote it through
// the cluster of its request, so no write went to a wrong cluster), no request named an object
// of another cluster, every member is engaged with its last credentials, nothing panicked and
// the goroutine count is back within a bound of where it was before the faults.
func TestSoak(t *testing.T) {
	duration := soakDuration(t)
	seed := time.Now().UnixNano()
	if v := os.Getenv("MCR_SOAK_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatalf("MCR_SOAK_SEED: %v", err)
		}
	}
	t.Logf("soak: %s, seed %d (MCR_SOAK_SEED=%d repeats the choices)", duration, seed, seed)

	s := &soak{t: t, l: newLedger(uniqueName("soak")), rng: rand.New(rand.NewPCG(uint64(seed), 0)),
		members: map[string]*soakMember{}, counts: map[string]int{}}
	createNamespace(t, s.l.ns, soakMembers...)
	s.provider = newKubeconfigProvider(t, kit.Options{Logger: logr.Discard()})
	panics := &logLines{words: []string{"panic", "Panic"}}
	s.mgr = newManager(t, s.provider, panics.logger())
	if err := mcbuilder.ControllerManagedBy(s.mgr).Named("soak-" + s.l.ns).For(&corev1.ConfigMap{}).Complete(s.reconciler()); err != nil {
		t.Fatal(err)
	}
	runManager(t, s.mgr)

	ctx := t.Context()
	for _, name := range soakMembers {
		m := &soakMember{name: name, present: true}
		s.members[name] = m
		if err := s.rotate(ctx, m, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range soakMembers {
		s.provider.events.waitReason(t, name, kit.ReasonClusterEngaged, 1)
	}

	churnCtx, stopChurn := context.WithCancel(ctx)
	defer stopChurn()
	var writers sync.WaitGroup
	for _, name := range soakMembers {
		w := newWriter(t, s.l, name)
		writers.Go(func() { s.churn(churnCtx, w) })
	}
	time.Sleep(5 * time.Second)
	runtime.GC()
	baseline := runtime.NumGoroutine()

	s.faults(ctx, time.Now().Add(duration))
	s.settle(ctx)
	time.Sleep(5 * time.Second)
	stopChurn()
	writers.Wait()
	ended := time.Now()

	testcheck.Within(2*time.Minute, func() bool { lost, _ := s.l.lost(everything); return len(lost) == 0 })
	lost, counted := s.l.lost(everything)
	unstamped, wrong := s.stamps(ctx)
	if len(wrong) == 0 && len(unstamped) > 0 {
		testcheck.Within(time.Minute, func() bool { unstamped, wrong = s.stamps(ctx); return len(unstamped) == 0 || len(wrong) > 0 })
	}
	tokens := testcheck.Within(time.Minute, func() bool { return len(s.staleCredentials(ctx)) == 0 })
	bound := baseline + baseline/4
	settled := testcheck.Within(time.Minute, func() bool { runtime.GC(); return runtime.NumGoroutine() <= bound })

	t.Logf("faults: %s", s.stats())
	t.Logf("objects written: %d, write errors while members were down or going: %d; write -> reconcile: %s",
		counted, s.writeErrors.Load(), summary(s.l.latencies(everything)))
	t.Logf("all reconciled %s after the faults ended", time.Since(ended).Round(time.Millisecond))
	t.Logf("goroutines: %d before the faults, %d after (bound %d)", baseline, runtime.NumGoroutine(), bound)
	if len(lost) > 0 {
		t.Errorf("%d of %d objects' last version was not reconciled: %s", len(lost), counted, firstLines(lost, 10))
	}
	if len(wrong) > 0 {
		t.Errorf("objects stamped by another cluster's reconcile: %s", firstLines(wrong, 10))
	}
	if len(unstamped) > 0 {
		t.Errorf("objects never stamped by their cluster's reconcile: %s", firstLines(unstamped, 10))
	}
	if n := s.misrouted.Load(); n > 0 {
		t.Errorf("%d requests named an object of another cluster", n)
	}
	if !tokens {
		t.Errorf("members not engaged with their last credentials: %v", s.staleCredentials(ctx))
	}
	if !settled {
		t.Errorf("goroutines did not settle: %d, bound %d", runtime.NumGoroutine(), bound)
	}
	if lines := panics.all(); len(lines) > 0 {
		t.Errorf("panics: %s", firstLines(lines, 5))
	}
	if t.Failed() {
		// What the next investigation needs: the fleet as the manager and the provider see it,
		// and where every goroutine is.
		t.Logf("engaged clusters: %v; provider: %+v", s.mgr.EngagedClusters(), s.provider.FleetStatus())
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		lines := strings.Split(stacks.String(), "\n")
		t.Logf("goroutines (first %d of %d lines):\n%s", min(400, len(lines)), len(lines), strings.Join(lines[:min(400, len(lines))], "\n"))
	}
}

// soak is the state of TestSoak.
type soak struct {
	t        *testing.T
	l        *ledger
	provider *kubeconfigProvider
	mgr      mcmanager.Manager

	misrouted   atomic.Int64
	writeErrors atomic.Int64

	mu      sync.Mutex // guards what follows
	rng     *rand.Rand
	members map[string]*soakMember
	pending sync.WaitGroup // faults that end later (a stopped member's start, a re-add)
	counts  map[string]int
	rotated int // accounts minted, to name the next one
}

type soakMember struct {
	name       string
	kubeconfig []byte // the last valid kubeconfig
	user       string // the user its last valid kubeconfig authenticates as
	down       bool   // its apiserver is stopped
	present    bool   // the provider has its kubeconfig
}

// reconciler reads each request's ConfigMap through the cluster of the request, books the
// version it read, and stamps the object with the request's cluster.
func (s *soak) reconciler() mcreconcile.Reconciler {
	return mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
		if req.Namespace != s.l.ns {
			return reconcile.Result{}, nil
		}
		if !strings.HasPrefix(req.Name, string(req.ClusterName)+"-") {
			s.misrouted.Add(1)
		}
		cl, err := s.mgr.GetCluster(ctx, req.ClusterName)
		if err != nil {
			return reconcile.Result{}, err
		}
		var cm corev1.ConfigMap
		err = cl.GetClient().Get(ctx, req.NamespacedName, &cm)
		switch {
		case apierrors.IsNotFound(err):
			s.l.saw(string(req.ClusterName), req.Name, gone)
			return reconcile.Result{}, nil
		case err != nil:
			return reconcile.Result{}, err
		}
		v, err := strconv.Atoi(cm.Data["v"])
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("ConfigMap %s has no version: %w", req.NamespacedName, err)
		}
		s.l.saw(string(req.ClusterName), req.Name, v)
		if cm.Annotations[reconciledIn] == string(req.ClusterName) {
			return reconcile.Result{}, nil
		}
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, reconciledIn, req.ClusterName)
		if err := cl.GetClient().Patch(ctx, &cm, client.RawPatch(types.MergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, nil
	})
}

// churn creates and changes ConfigMaps in w's member, one every churnInterval, until ctx ends.
// Writes to a member that is down fail; they are counted, not booked.
func (s *soak) churn(ctx context.Context, w *writer) {
	ticker := time.NewTicker(churnInterval)
	defer ticker.Stop()
	for op := 0; ; op++ {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		var err error
		if n := w.count(); n < 5 || (op%3 == 0 && n < 60) {
			err = w.create(ctx)
		} else {
			err = w.update(ctx, op)
		}
		if err != nil && ctx.Err() == nil {
			s.writeErrors.Add(1)
		}
	}
}

// faults makes one random fault every one to three seconds until deadline.
func (s *soak) faults(ctx context.Context, deadline time.Time) {
	for time.Now().Before(deadline) {
		s.mu.Lock()
		pause := time.Second + time.Duration(s.rng.Int64N(int64(2*time.Second)))
		m := s.members[soakMembers[s.rng.IntN(len(soakMembers))]]
		fault := s.rng.IntN(3)
		s.mu.Unlock()
		time.Sleep(pause)
		switch fault {
		case 0:
			s.stopAndStart(ctx, m)
		case 1:
			if err := s.rotate(ctx, m, true); err != nil {
				s.count("rotation skipped (member down)")
			}
		case 2:
			s.removeAndAdd(m)
		}
	}
}

// stopAndStart stops m's apiserver and starts it again 3 to 12 s later, unless a member is
// already down.
func (s *soak) stopAndStart(ctx context.Context, m *soakMember) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.members {
		if o.down {
			return
		}
	}
	m.down = true
	s.counts["member stopped and started"]++
	if err := fleet.Member(m.name).Stop(); err != nil {
		s.t.Errorf("stopping %s: %v", m.name, err)
	}
	outage := 3*time.Second + time.Duration(s.rng.Int64N(int64(9*time.Second)))
	s.pending.Go(func() {
		time.Sleep(outage)
		if err := fleet.Member(m.name).Start(ctx); err != nil {
			s.t.Errorf("starting %s: %v", m.name, err)
		}
		s.mu.Lock()
		m.down = false
		s.mu.Unlock()
	})
}

// invalidKubeconfigs are what a rotation may write before the valid kubeconfig: each is refused
// by the provider, which keeps the working instance.
var invalidKubeconfigs = []func(valid []byte) []byte{
	func([]byte) []byte { return []byte("apiVersion: v1\nkind: Config\nclusters: [half written") },
	func(valid []byte) []byte {
		return []byte(strings.Replace(string(valid), "token: ", "token: not-a-valid-", 1))
	},
	func([]byte) []byte { return []byte{} }, // an empty kubeconfig
}

// rotate mints new credentials for m and gives them to the provider, half of the time after a
// write the provider refuses when throughInvalid is set. It fails when m is down.
func (s *soak) rotate(ctx context.Context, m *soakMember, throughInvalid bool) error {
	s.mu.Lock()
	s.rotated++
	account := fmt.Sprintf("soak-%s-%d", m.name, s.rotated)
	invalid := -1
	if throughInvalid && s.rng.IntN(2) == 0 {
		invalid = s.rng.IntN(len(invalidKubeconfigs))
	}
	s.mu.Unlock()

	data, user, err := memberKubeconfig(ctx, m.name, account)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if invalid >= 0 && m.present {
		s.provider.set(m.name, invalidKubeconfigs[invalid](data))
		s.counts["rotation through an invalid write"]++
		s.mu.Unlock()
		time.Sleep(300 * time.Millisecond)
		s.mu.Lock()
	} else {
		s.counts["rotation"]++
	}
	m.kubeconfig, m.user = data, user
	if m.present {
		s.provider.set(m.name, data)
	}
	return nil
}

// removeAndAdd removes m from the provider and adds it back 1 to 5 s later.
func (s *soak) removeAndAdd(m *soakMember) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !m.present {
		return
	}
	m.present = false
	s.counts["member removed and added"]++
	s.provider.set(m.name, nil)
	gap := time.Second + time.Duration(s.rng.Int64N(int64(4*time.Second)))
	s.pending.Go(func() {
		time.Sleep(gap)
		s.mu.Lock()
		defer s.mu.Unlock()
		m.present = true
		s.provider.set(m.name, m.kubeconfig)
	})
}

func (s *soak) count(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[what]++
}

// settle waits for the faults that end later; then every member is up and present.
func (s *soak) settle(ctx context.Context) {
	s.pending.Wait()
	for _, name := range soakMembers {
		if err := fleet.Member(name).Start(ctx); err != nil {
			s.t.Errorf("starting %s: %v", name, err)
		}
	}
}

func (s *soak) stats() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parts []string
	for what, n := range s.counts {
		parts = append(parts, fmt.Sprintf("%s: %d", what, n))
	}
	return strings.Join(parts, ", ")
}

// stamps lists every ConfigMap of the soak in every member and returns those without the
// reconciledIn annotation and those whose annotation names another cluster.
func (s *soak) stamps(ctx context.Context) (unstamped, wrong []string) {
	for _, name := range soakMembers {
		c := fleet.Member(name).ClientForTest(s.t, client.Options{})
		var list corev1.ConfigMapList
		if err := c.List(ctx, &list, client.InNamespace(s.l.ns)); err != nil {
			s.t.Fatalf("listing ConfigMaps in %s: %v", name, err)
		}
		for _, cm := range list.Items {
			switch in := cm.Annotations[reconciledIn]; in {
			case name:
			case "":
				unstamped = append(unstamped, name+"/"+cm.Name)
			default:
				wrong = append(wrong, fmt.Sprintf("%s/%s by %s", name, cm.Name, in))
			}
		}
	}
	return unstamped, wrong
}

// staleCredentials returns the members the manager serves with other credentials than their
// last valid ones.
func (s *soak) staleCredentials(ctx context.Context) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var stale []string
	for _, name := range soakMembers {
		cl, err := s.mgr.GetCluster(ctx, multicluster.ClusterName(name))
		if err != nil {
			stale = append(stale, name)
			continue
		}
		if user, err := providertest.UserOf(ctx, cl.GetConfig()); err != nil || user != s.members[name].user {
			stale = append(stale, name)
		}
	}
	return stale
}
