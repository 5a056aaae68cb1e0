// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package manager

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/sharding"
)

// DefaultFleetDebugPath is where AddFleetDebugHandler serves the fleet debug endpoint when
// given no path.
const DefaultFleetDebugPath = "/debug/fleet"

// Cluster states of FleetCluster.State.
const (
	// ClusterEngaged: the cluster is engaged on this replica.
	ClusterEngaged = "Engaged"
	// ClusterFailing: the provider found the member but cannot engage it (FleetCluster.LastError
	// says why).
	ClusterFailing = "Failing"
	// ClusterOffered: with sharding, the provider offers the cluster but this replica has not
	// engaged it: FleetCluster.Owner owns it (or this replica is about to take it over).
	ClusterOffered = "Offered"
)

// FleetDebug is what the fleet debug endpoint shows: the clusters this replica knows, with what
// each controller has made of them. It holds names, states, times and the providers' problem
// reasons (which never quote credentials); nothing else of a member's configuration.
type FleetDebug struct {
	// Time is when the state was read.
	Time time.Time `json:"time"`
	// Provider names the provider (for kit providers their name, e.g. "kubeconfig-provider";
	// else its Go type); empty without a provider.
	Provider string `json:"provider,omitempty"`
	// Listed is true once the provider has synced its first list of members (always true for
	// providers that do not report it, see multicluster.StatusReporter).
	Listed bool `json:"listed"`
	// Replica is this replica's identity under sharding (WithSharding); empty without.
	Replica string `json:"replica,omitempty"`
	// Elected is true once this replica leads (always true without leader election).
	Elected bool `json:"elected"`
	// Clusters are the engaged clusters, then the members that fail and, with sharding, those
	// offered but not engaged here, each sorted by name.
	Clusters []FleetCluster `json:"clusters"`
	// Controllers are the controllers (and other Awares that report their sync state), sorted by
	// name.
	Controllers []ControllerDebug `json:"controllers"`
}

// FleetCluster is one cluster of FleetDebug.
type FleetCluster struct {
	// Name is the cluster's name; "" is the local cluster.
	Name multicluster.ClusterName `json:"name"`
	// State is ClusterEngaged, ClusterFailing or ClusterOffered.
	State string `json:"state"`
	// Provider is the provider that offers the cluster, or "local" for the local cluster.
	Provider string `json:"provider"`
	// EngagedSince is when this replica engaged the cluster (its current instance); nil when it
	// is not engaged.
	EngagedSince *time.Time `json:"engagedSince,omitempty"`
	// Owner is, under sharding, the replica that owns the cluster: this one for engaged
	// clusters, for others the owner by rendezvous hashing over the replicas this one sees.
	Owner string `json:"owner,omitempty"`
	// Synced is true when every running controller has synced all its watches of the cluster.
	Synced bool `json:"synced"`
	// Unsynced names the controllers that run and have not synced the cluster yet.
	Unsynced []string `json:"unsynced,omitempty"`
	// QueueDepth is the number of the cluster's requests waiting in all controllers' queues,
	// when their queues count per cluster; nil when none does.
	QueueDepth *int `json:"queueDepth,omitempty"`
	// Breakers are the states of the cluster's circuit breakers, by controller, for the
	// controllers whose queues have one.
	Breakers map[string]string `json:"breakers,omitempty"`
	// LastError is the provider's problem with the member (Failing; for an engaged member, the
	// problem of newer credentials, the engaged instance keeping the ones that worked).
	LastError string `json:"lastError,omitempty"`
	// Parked lists what waits for the cluster to serve a kind: controllers' sources
	// ("<controller>: <source>") and the provider's field indexes ("field index <field> of
	// <kind>"). Each starts once the cluster serves its kind.
	Parked []string `json:"parked,omitempty"`
}

// ControllerDebug is what a controller reports about itself on the fleet debug endpoint; see
// DebugReporter.
type ControllerDebug struct {
	// Name is the controller's name.
	Name string `json:"name"`
	// Running is false while the controller does not run: before it starts (on a replica that
	// waits for the leader election, unless it warms up) and after it stopped.
	Running bool `json:"running"`
	// QueueDepth is the length of the controller's queue (all clusters); -1 before it runs.
	QueueDepth int `json:"queueDepth"`
	// Clusters are the clusters the controller is engaged with.
	Clusters []ControllerCluster `json:"clusters,omitempty"`
}

// ControllerCluster is one cluster of a controller.
type ControllerCluster struct {
	Name multicluster.ClusterName `json:"name"`
	// Synced is true when every source has synced for the cluster (or does not watch it).
	Synced bool `json:"synced"`
	// Sources are the controller's sources, in the order they were added.
	Sources []SourceDebug `json:"sources,omitempty"`
	// QueueDepth is the number of the cluster's requests in the queue, when the queue counts
	// per cluster; nil otherwise.
	QueueDepth *int `json:"queueDepth,omitempty"`
	// Breaker is the state of the cluster's circuit breaker in the queue ("closed",
	// "half_open", "open"), when the queue has one; empty otherwise.
	Breaker string `json:"breaker,omitempty"`
	// LastError is the last error a reconcile of one of the cluster's requests returned since
	// the cluster was engaged (redacted: it quotes no credentials), and LastErrorTime when; a
	// later success does not clear it.
	LastError     string     `json:"lastError,omitempty"`
	LastErrorTime *time.Time `json:"lastErrorTime,omitempty"`
}

// SourceDebug is one source of a controller for one cluster.
type SourceDebug struct {
	// Source describes the source, e.g. "kind source: *v1.ConfigMap".
	Source string `json:"source"`
	// Synced is true once the source has synced for the cluster, when it does not watch it, and
	// while it is parked.
	Synced bool `json:"synced"`
	// Parked says why the source waits: the cluster does not serve its kind (yet). It starts
	// once the cluster does; empty when the source is not parked.
	Parked string `json:"parked,omitempty"`
}

// DebugReporter is implemented by Awares that describe themselves on the fleet debug endpoint:
// mcr's controllers do. Awares that only implement SyncReporter are shown by their Go type with
// their sync state.
type DebugReporter interface {
	DebugState() ControllerDebug
}

// parkedIndexReporter is implemented by providers whose field indexes wait for members that do
// not serve the indexed kind: those built on mcr.dev/core/clusters.Clusters.
type parkedIndexReporter interface {
	ParkedIndexes() map[multicluster.ClusterName][]string
}

// providerNamer is implemented by providers that have a name: those built on the provider kit.
type providerNamer interface{ ProviderName() string }

// clusterLister is implemented by providers that can list the clusters they offer (their engaged
// members): under sharding, those this replica has not engaged are shown as offered.
type clusterLister interface {
	ClusterNames() []multicluster.ClusterName
}

// AddFleetDebugHandler serves the fleet debug endpoint on the manager's metrics server at path
// (DefaultFleetDebugPath when empty): a plain-text table by default, JSON with ?format=json or
// an Accept header that asks for application/json. It lists every cluster this replica knows
// (engaged, failing, or under sharding offered and owned by another replica) with its provider, engaged-since, owner
// replica, sync state per controller, queue depth, circuit breaker state and the provider's last
// problem, and every controller with its queue depth. It shows names, states and reasons only, never
// credentials; the metrics server's authentication and authorization (Metrics.FilterProvider)
// protect it like /metrics. Add it before the manager starts.
func AddFleetDebugHandler(mgr Manager, path string) error {
	h, err := FleetDebugHandler(mgr)
	if err != nil {
		return err
	}
	if path == "" {
		path = DefaultFleetDebugPath
	}
	return mgr.AddMetricsServerExtraHandler(path, h)
}

// FleetDebugHandler returns the fleet debug endpoint's handler, for a server of your own; see
// AddFleetDebugHandler.
func FleetDebugHandler(mgr Manager) (http.Handler, error) {
	m, ok := mgr.(*mcManager)
	if !ok {
		return nil, fmt.Errorf("fleet debug handler: %T is not an mcr manager", mgr)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		d := m.debugState()
		w.Header().Set("Cache-Control", "no-store")
		if wantsJSON(r) {
			w.Header().Set("Content-Type", "application/json")
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			_ = enc.Encode(d)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_ = d.WriteText(w)
	}), nil
}

// DebugFleet returns what the fleet debug endpoint shows, for callers outside it.
func DebugFleet(mgr Manager) (FleetDebug, error) {
	m, ok := mgr.(*mcManager)
	if !ok {
		return FleetDebug{}, fmt.Errorf("fleet debug: %T is not an mcr manager", mgr)
	}
	return m.debugState(), nil
}

func wantsJSON(r *http.Request) bool {
	switch r.URL.Query().Get("format") {
	case "json":
		return true
	case "text":
		return false
	}
	for _, accept := range strings.Split(r.Header.Get("Accept"), ",") {
		if t, _, err := mime.ParseMediaType(strings.TrimSpace(accept)); err == nil && t == "application/json" {
			return true
		}
	}
	return false
}

// debugState reads the state of the provider, the engaged clusters, the sharding coordinator
// and the Awares, each under its own lock, never two at once.
func (m *mcManager) debugState() FleetDebug {
	d := FleetDebug{Time: time.Now(), Listed: true, Elected: isClosed(m.Elected())}
	providerName := ""
	var status multicluster.FleetStatus
	if m.provider != nil {
		providerName = fmt.Sprintf("%T", m.provider)
		if n, ok := m.provider.(providerNamer); ok && n.ProviderName() != "" {
			providerName = n.ProviderName()
		}
		if reporter, ok := m.provider.(multicluster.StatusReporter); ok {
			status = reporter.FleetStatus()
			d.Listed = status.Listed
		}
	}
	d.Provider = providerName
	var parkedIndexes map[multicluster.ClusterName][]string
	if r, ok := m.provider.(parkedIndexReporter); ok {
		parkedIndexes = r.ParkedIndexes()
	}
	if local := m.localIndexes.ParkedIndexes()[LocalCluster]; len(local) > 0 {
		parkedIndexes = maps.Clone(parkedIndexes)
		if parkedIndexes == nil {
			parkedIndexes = map[multicluster.ClusterName][]string{}
		}
		parkedIndexes[LocalCluster] = append(slices.Clone(parkedIndexes[LocalCluster]), local...)
	}

	m.mu.Lock()
	engaged := map[multicluster.ClusterName]time.Time{}
	for name, e := range m.engaged {
		if e.ctx.Err() == nil {
			engaged[name] = e.since
		}
	}
	awares := slices.Clone(m.awares)
	m.mu.Unlock()

	for _, a := range awares {
		switch r := a.(type) {
		case DebugReporter:
			d.Controllers = append(d.Controllers, r.DebugState())
		case SyncReporter:
			c := ControllerDebug{Name: fmt.Sprintf("%T", a), QueueDepth: -1}
			for name := range engaged {
				synced, applies := r.SyncedFor(name)
				c.Running = c.Running || applies
				if applies {
					c.Clusters = append(c.Clusters, ControllerCluster{Name: name, Synced: synced})
				}
			}
			d.Controllers = append(d.Controllers, c)
		}
	}
	slices.SortStableFunc(d.Controllers, func(a, b ControllerDebug) int { return strings.Compare(a.Name, b.Name) })

	var peers []sharding.Peer
	if m.coordinator != nil {
		d.Replica = m.coordinator.Identity()
		peers = m.coordinator.Peers()
	}
	for _, name := range slices.Sorted(maps.Keys(engaged)) {
		since := engaged[name]
		c := FleetCluster{Name: name, State: ClusterEngaged, Provider: providerName, EngagedSince: &since,
			Owner: d.Replica, Synced: true, LastError: status.Failing[name]}
		if name == LocalCluster {
			c.Provider = "local"
		}
		for _, ctrl := range d.Controllers {
			if !ctrl.Running {
				continue
			}
			cc, ok := findCluster(ctrl.Clusters, name)
			if !ok || !cc.Synced {
				c.Synced = false
				c.Unsynced = append(c.Unsynced, ctrl.Name)
			}
			if ok && cc.QueueDepth != nil {
				c.QueueDepth = addDepth(c.QueueDepth, *cc.QueueDepth)
			}
			if ok && cc.Breaker != "" {
				if c.Breakers == nil {
					c.Breakers = map[string]string{}
				}
				c.Breakers[ctrl.Name] = cc.Breaker
			}
			for _, src := range cc.Sources {
				if src.Parked != "" {
					c.Parked = append(c.Parked, ctrl.Name+": "+src.Source)
				}
			}
		}
		c.Parked = append(c.Parked, parkedIndexes[name]...)
		d.Clusters = append(d.Clusters, c)
	}
	for _, name := range slices.Sorted(maps.Keys(status.Failing)) {
		if _, ok := engaged[name]; ok {
			continue
		}
		d.Clusters = append(d.Clusters, FleetCluster{Name: name, State: ClusterFailing, Provider: providerName,
			Owner: ownerOf(name, peers), LastError: status.Failing[name]})
	}
	if lister, ok := m.provider.(clusterLister); ok && m.coordinator != nil {
		for _, name := range lister.ClusterNames() {
			if _, ok := engaged[name]; ok {
				continue
			}
			if _, ok := status.Failing[name]; ok {
				continue
			}
			d.Clusters = append(d.Clusters, FleetCluster{Name: name, State: ClusterOffered, Provider: providerName,
				Owner: ownerOf(name, peers)})
		}
	}
	return d
}

func findCluster(list []ControllerCluster, name multicluster.ClusterName) (ControllerCluster, bool) {
	for _, c := range list {
		if c.Name == name {
			return c, true
		}
	}
	return ControllerCluster{}, false
}

func addDepth(total *int, n int) *int {
	if total == nil {
		return &n
	}
	sum := *total + n
	return &sum
}

func ownerOf(name multicluster.ClusterName, peers []sharding.Peer) string {
	p, ok := sharding.Owner(name, peers)
	if !ok {
		return ""
	}
	return p.ID
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// WriteText writes d as the plain-text tables of the fleet debug endpoint.
func (d FleetDebug) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	var errs []error
	line := func(cells ...string) {
		_, err := fmt.Fprintln(tw, strings.Join(cells, "\t"))
		errs = append(errs, err)
	}
	provider := d.Provider
	if provider == "" {
		provider = "(none)"
	}
	listed := "listed"
	if !d.Listed {
		listed = "NOT LISTED YET"
	}
	header := fmt.Sprintf("provider %s (%s)", provider, listed)
	if d.Replica != "" {
		header += ", replica " + d.Replica
	}
	if d.Elected {
		header += ", elected"
	} else {
		header += ", not elected"
	}
	line(header + ", at " + d.Time.UTC().Format(time.RFC3339))
	line()
	line("CLUSTER", "STATE", "PROVIDER", "ENGAGED-SINCE", "OWNER", "SYNCED", "QUEUE", "BREAKER", "LAST-ERROR")
	for _, c := range d.Clusters {
		name := string(c.Name)
		if c.Name == LocalCluster {
			name = "(local)"
		}
		since := "-"
		if c.EngagedSince != nil {
			since = c.EngagedSince.UTC().Format(time.RFC3339) + " (" + d.Time.Sub(*c.EngagedSince).Truncate(time.Second).String() + ")"
		}
		synced := "-"
		if c.State == ClusterEngaged {
			synced = "yes"
			if !c.Synced {
				synced = "no: " + strings.Join(c.Unsynced, ",")
			}
		}
		queue := "-"
		if c.QueueDepth != nil {
			queue = strconv.Itoa(*c.QueueDepth)
		}
		line(name, c.State, c.Provider, since, orDash(c.Owner), synced, queue, breakers(c.Breakers), orDash(oneLine(c.LastError)))
	}
	line()
	line("CONTROLLER", "RUNNING", "QUEUE", "CLUSTERS", "UNSYNCED SOURCES")
	for _, c := range d.Controllers {
		running, queue := "no", "-"
		if c.Running {
			running = "yes"
		}
		if c.QueueDepth >= 0 {
			queue = strconv.Itoa(c.QueueDepth)
		}
		var unsynced []string
		for _, cc := range c.Clusters {
			for _, s := range cc.Sources {
				if !s.Synced {
					unsynced = append(unsynced, fmt.Sprintf("%s: %s", displayName(cc.Name), s.Source))
				}
			}
			if !cc.Synced && len(cc.Sources) == 0 {
				unsynced = append(unsynced, displayName(cc.Name))
			}
		}
		line(c.Name, running, queue, strconv.Itoa(len(c.Clusters)), orDash(strings.Join(unsynced, "; ")))
	}
	var parked [][]string
	for _, c := range d.Clusters {
		for _, p := range c.Parked {
			parked = append(parked, []string{displayName(c.Name), p})
		}
	}
	if len(parked) > 0 {
		line()
		line("CLUSTER", "PARKED UNTIL THE CLUSTER SERVES ITS KIND")
		for _, p := range parked {
			line(p...)
		}
	}
	var failures [][]string
	for _, c := range d.Controllers {
		for _, cc := range c.Clusters {
			if cc.LastError != "" && cc.LastErrorTime != nil {
				at := cc.LastErrorTime.UTC().Format(time.RFC3339) + " (" + d.Time.Sub(*cc.LastErrorTime).Truncate(time.Second).String() + " ago)"
				failures = append(failures, []string{c.Name, displayName(cc.Name), at, oneLine(cc.LastError)})
			}
		}
	}
	if len(failures) > 0 {
		line()
		line("CONTROLLER", "CLUSTER", "LAST RECONCILE ERROR AT", "ERROR")
		for _, f := range failures {
			line(f...)
		}
	}
	errs = append(errs, tw.Flush())
	return errors.Join(errs...)
}

// breakers says "closed" when every breaker of the cluster is, else which are not.
func breakers(states map[string]string) string {
	if len(states) == 0 {
		return "-"
	}
	var notClosed []string
	for _, ctrl := range slices.Sorted(maps.Keys(states)) {
		if states[ctrl] != "closed" {
			notClosed = append(notClosed, ctrl+":"+states[ctrl])
		}
	}
	if len(notClosed) == 0 {
		return "closed"
	}
	return strings.Join(notClosed, ",")
}

func displayName(name multicluster.ClusterName) string {
	if name == LocalCluster {
		return "(local)"
	}
	return string(name)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine keeps a multi-line reason on its table row.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
