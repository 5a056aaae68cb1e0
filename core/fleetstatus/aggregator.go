// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleetstatus

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/redact"
)

// LocalClusterName stands for the local cluster (whose ClusterName is "") in ClusterCondition.
const LocalClusterName = "(local)"

// Aggregator maintains the fleet status of hub objects from per-cluster results: one
// ClusterCondition per cluster and type, the counts, and a summary condition. It writes a status
// only when it changed, and at most once per Options.MinInterval for each object. One Aggregator
// serves every object of a controller and is safe for concurrent use.
type Aggregator struct {
	client client.Client
	opts   Options

	mu sync.Mutex
	// written is when the status of each hub object (by UID) was last written, for the objects
	// written within the last MinInterval; older entries are pruned.
	written   map[string]time.Time
	lastPrune time.Time
}

// New returns an Aggregator that writes through c, the client of the cluster the hub objects
// live in (for a hub in the host: mgr.GetLocalManager().GetClient()).
func New(c client.Client, opts Options) *Aggregator {
	return &Aggregator{client: c, opts: opts.withDefaults(c), written: map[string]time.Time{}}
}

// Update sets obj's fleet status from results, as Set does, and writes it to the status
// subresource with a merge patch that fails on a concurrent change; a conflict is retried on a
// fresh read of the object (Options.APIReader) with client-go's retry.DefaultBackoff. obj is the
// object as read, unchanged; after a write it holds the object as written.
//
// Nothing is written when the status did not change. When the object's status was written less
// than Options.MinInterval ago, nothing is written either and obj is left as it was: the returned
// Result asks to be reconciled again when the interval ends, so return it from Reconcile (the
// sooner of it and your own requeue, see Sooner). An object that is gone is not an error.
func (a *Aggregator) Update(ctx context.Context, obj Object, results []Result) (reconcile.Result, error) {
	before, err := deepCopy(obj)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !a.Set(obj, results) {
		return reconcile.Result{}, nil
	}
	log := ctrllog.FromContext(ctx)
	key := writeKey(obj)
	if wait := a.wait(key); wait > 0 {
		// Leave obj as it is in the API server: the caller must not take the deferred status
		// for a written one.
		*obj.FleetStatus() = *before.FleetStatus()
		*obj.StatusConditions() = *before.StatusConditions()
		log.V(1).Info("Fleet status changed; write deferred", "after", wait)
		return reconcile.Result{RequeueAfter: wait}, nil
	}

	first, written := true, false
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if !first {
			if err := a.reread(ctx, obj); err != nil {
				return err
			}
			if before, err = deepCopy(obj); err != nil {
				return err
			}
			if !a.Set(obj, results) {
				return nil // the concurrent writer left nothing for us to change
			}
		}
		first = false
		if err := a.client.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		written = true
		return nil
	})
	switch {
	case apierrors.IsNotFound(err):
		a.forget(key)
		return reconcile.Result{}, nil
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("writing the fleet status of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	if !written {
		return reconcile.Result{}, nil
	}
	a.wrote(key)
	fs := obj.FleetStatus()
	log.V(1).Info("Fleet status written", "ready", fs.ReadyClusters, "total", fs.TotalClusters)
	return reconcile.Result{}, nil
}

// Set computes obj's fleet status from results in memory, and reports whether it changed:
//
//   - results describe the whole fleet: a cluster without a result is dropped from the list
//     (it left the fleet). To keep reporting a cluster that is out of reach, give it a Result
//     with status Unknown or False.
//   - A ClusterCondition keeps its LastTransitionTime while its status stays the same.
//   - Messages are redacted of credentials (redact.Text) and cut to
//     Options.MaxMessageLength.
//   - The summary condition (Options.SummaryType) is True when every cluster is ready, False
//     when one is False, else Unknown; its message counts the ready clusters and names the
//     others with their reasons ("Synced 198/200, failing: east-3 (Forbidden), west-1
//     (Timeout)"), within Options.MaxSummaryLength.
//
// Of two results for the same cluster and type, the last counts.
func (a *Aggregator) Set(obj Object, results []Result) bool {
	now := metav1.NewTime(a.opts.Clock.Now().Truncate(time.Second))
	gen := obj.GetGeneration()
	fs := obj.FleetStatus()

	clusters := a.clusterConditions(fs.Clusters, results, gen, now)
	ready, total, summary := a.summary(clusters, gen, now)
	next := FleetStatus{Clusters: clusters, ReadyClusters: int32(ready), TotalClusters: int32(total)}
	changed := !equality.Semantic.DeepEqual(*fs, next)
	*fs = next
	if meta.SetStatusCondition(obj.StatusConditions(), summary) {
		changed = true
	}
	return changed
}

// Sooner returns the result that asks to be reconciled sooner: the one that requeues at all,
// or the one with the shorter RequeueAfter. It merges Update's result with a controller's own.
func Sooner(a, b reconcile.Result) reconcile.Result {
	switch {
	case a.RequeueAfter == 0:
		return b
	case b.RequeueAfter == 0 || a.RequeueAfter <= b.RequeueAfter:
		return a
	}
	return b
}

// clusterConditions turns results into the sorted conditions, keeping the transition times of
// those in old whose status did not change.
func (a *Aggregator) clusterConditions(old []ClusterCondition, results []Result, gen int64, now metav1.Time) []ClusterCondition {
	type key struct{ cluster, typ string }
	prev := make(map[key]ClusterCondition, len(old))
	for _, c := range old {
		prev[key{c.Cluster, c.Type}] = c
	}
	byKey := make(map[key]ClusterCondition, len(results))
	for _, r := range results {
		c := ClusterCondition{
			Cluster:            clusterName(r.Cluster),
			Type:               cmp.Or(r.Type, a.opts.ConditionType),
			Status:             cmp.Or(r.Status, metav1.ConditionUnknown),
			Reason:             r.Reason,
			Message:            truncate(redact.Text(r.Message), a.opts.MaxMessageLength),
			ObservedGeneration: gen,
			LastTransitionTime: now,
		}
		if c.Reason == "" {
			c.Reason = defaultReason(c.Status)
		}
		k := key{c.Cluster, c.Type}
		if p, ok := prev[k]; ok && p.Status == c.Status && !p.LastTransitionTime.IsZero() {
			c.LastTransitionTime = p.LastTransitionTime
		}
		byKey[k] = c
	}
	if len(byKey) == 0 {
		return nil
	}
	out := make([]ClusterCondition, 0, len(byKey))
	for _, c := range byKey {
		out = append(out, c)
	}
	slices.SortFunc(out, func(x, y ClusterCondition) int {
		return cmp.Or(strings.Compare(x.Cluster, y.Cluster), strings.Compare(x.Type, y.Type))
	})
	return out
}

// summary counts the clusters of conditions (sorted by cluster) and builds the summary condition.
func (a *Aggregator) summary(conditions []ClusterCondition, gen int64, now metav1.Time) (ready, total int, _ metav1.Condition) {
	// One entry per cluster that is not ready, with the reason of its first False condition, or
	// else of its first Unknown one.
	type notReady struct {
		cluster, reason string
		status          metav1.ConditionStatus
	}
	var failing []notReady
	for i := 0; i < len(conditions); {
		j := i
		worst := notReady{cluster: conditions[i].Cluster, status: metav1.ConditionTrue}
		for ; j < len(conditions) && conditions[j].Cluster == conditions[i].Cluster; j++ {
			c := conditions[j]
			switch {
			case c.Status == metav1.ConditionFalse && worst.status != metav1.ConditionFalse,
				c.Status != metav1.ConditionTrue && worst.status == metav1.ConditionTrue:
				worst.status, worst.reason = c.Status, c.Reason
			}
		}
		total++
		if worst.status == metav1.ConditionTrue {
			ready++
		} else {
			failing = append(failing, worst)
		}
		i = j
	}
	// False before Unknown: failures are what a reader looks for.
	slices.SortStableFunc(failing, func(x, y notReady) int {
		return cmp.Compare(statusRank(x.status), statusRank(y.status))
	})

	cond := metav1.Condition{Type: a.opts.SummaryType, ObservedGeneration: gen, LastTransitionTime: now}
	switch {
	case total == 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, ReasonNoClusters, "no clusters"
		return ready, total, cond
	case len(failing) == 0:
		cond.Status, cond.Reason = metav1.ConditionTrue, ReasonAllReady
	case failing[0].status == metav1.ConditionFalse:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonNotReady
	default:
		cond.Status, cond.Reason = metav1.ConditionUnknown, ReasonPending
	}
	items := make([]string, len(failing))
	for i, f := range failing {
		items[i] = fmt.Sprintf("%s (%s)", f.cluster, f.reason)
	}
	cond.Message = boundedList(fmt.Sprintf("%s %d/%d", a.opts.ConditionType, ready, total), items, a.opts.MaxSummaryLength)
	return ready, total, cond
}

// boundedList is head followed by ", failing: " and as many items as fit in limit bytes, the
// rest counted ("and 3 more").
func boundedList(head string, items []string, limit int) string {
	if len(items) == 0 {
		return truncate(head, limit)
	}
	more := func(n, listed int) string {
		switch {
		case n == 0:
			return ""
		case listed == 0:
			return fmt.Sprintf(", failing: %d clusters", n)
		}
		return fmt.Sprintf(" and %d more", n)
	}
	var b strings.Builder
	b.WriteString(head)
	listed := 0
	for _, item := range items {
		sep := ", "
		if listed == 0 {
			sep = ", failing: "
		}
		if b.Len()+len(sep)+len(item)+len(more(len(items)-listed-1, listed+1)) > limit {
			break
		}
		b.WriteString(sep)
		b.WriteString(item)
		listed++
	}
	b.WriteString(more(len(items)-listed, listed))
	return truncate(b.String(), limit)
}

// wait returns how long a write of the object with key must wait for its MinInterval to end.
func (a *Aggregator) wait(key string) time.Duration {
	if a.opts.MinInterval < 0 {
		return 0
	}
	now := a.opts.Clock.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if now.Sub(a.lastPrune) >= a.opts.MinInterval {
		for k, t := range a.written {
			if now.Sub(t) >= a.opts.MinInterval {
				delete(a.written, k)
			}
		}
		a.lastPrune = now
	}
	last, ok := a.written[key]
	if !ok {
		return 0
	}
	return max(0, a.opts.MinInterval-now.Sub(last))
}

func (a *Aggregator) wrote(key string) {
	if a.opts.MinInterval < 0 {
		return
	}
	now := a.opts.Clock.Now()
	a.mu.Lock()
	a.written[key] = now
	a.mu.Unlock()
}

func (a *Aggregator) forget(key string) {
	a.mu.Lock()
	delete(a.written, key)
	a.mu.Unlock()
}

// reread replaces obj with the object as the API server has it now. It reads into a new object:
// decoding into obj would keep fields the fresh object no longer has.
func (a *Aggregator) reread(ctx context.Context, obj Object) error {
	fresh := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(Object)
	if err := a.opts.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
		return err
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(fresh).Elem())
	return nil
}

// writeKey identifies a hub object; its UID tells it from an earlier object of the same name.
func writeKey(obj Object) string {
	if uid := obj.GetUID(); uid != "" {
		return string(uid)
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

func deepCopy(obj Object) (Object, error) {
	c, ok := obj.DeepCopyObject().(Object)
	if !ok {
		return nil, fmt.Errorf("fleetstatus: the deep copy of %T is a %T, which does not implement fleetstatus.Object", obj, obj.DeepCopyObject())
	}
	return c, nil
}

func clusterName(name multicluster.ClusterName) string {
	if name == "" {
		return LocalClusterName
	}
	return string(name)
}

func defaultReason(status metav1.ConditionStatus) string {
	switch status {
	case metav1.ConditionTrue:
		return ReasonSucceeded
	case metav1.ConditionFalse:
		return ReasonFailed
	}
	return ReasonUnknown
}

func statusRank(s metav1.ConditionStatus) int {
	if s == metav1.ConditionFalse {
		return 0
	}
	return 1
}

// truncate cuts s to at most limit bytes at a character boundary, ending it in "..." when cut.
func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const ellipsis = "..."
	cut := limit - len(ellipsis)
	suffix := ellipsis
	if cut < 0 {
		cut, suffix = limit, ""
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + suffix
}
