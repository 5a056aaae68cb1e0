// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mccontroller "mcr.dev/core/controller"
	mchandler "mcr.dev/core/handler"
	"mcr.dev/core/internal/testcheck"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	mcreconcile "mcr.dev/core/reconcile"
	"mcr.dev/core/sharding"
	mcsource "mcr.dev/core/source"
)

// fixedProvider is a provider on the kit whose members are a fixed list, queued when it
// starts as a host informer's first list would be.
type fixedProvider struct {
	kit.Members[string]
	engine  *kit.Engine[string]
	members map[string]*rest.Config
}

func newFixedProvider(t *testing.T, members map[string]*rest.Config) *fixedProvider {
	t.Helper()
	p := &fixedProvider{members: members}
	var err error
	p.engine, err = p.Init(kit.EngineOptions[string]{
		Name: "fixed-provider",
		Options: kit.Options{
			CacheSyncTimeout: 5 * time.Second,
			RetryMinDelay:    100 * time.Millisecond, RetryMaxDelay: time.Second,
			Logger: logr.Discard(),
		},
		Sync:    p.sync,
		Sources: []kit.Source[string]{fixedSource{p}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *fixedProvider) sync(ctx context.Context, name string) kit.Result {
	return p.engine.Engage(ctx, name, kit.Member{Name: multicluster.ClusterName(name), Config: p.members[name], From: "the test"})
}

type fixedSource struct{ p *fixedProvider }

func (s fixedSource) Start(_ context.Context, e *kit.Engine[string]) (func(), error) {
	for name := range s.p.members {
		e.Add(name)
	}
	return func() {}, nil
}

// debugSecret is the password a failing reconcile quotes in a URL.
const debugSecret = "hunter2-very-secret"

// freeAddress returns a local address nothing listens on, for a metrics server the test reaches.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// get GETs url with the Accept header, and returns the body when the answer is 200.
func get(url, accept string) (string, http.Header, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return "", nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return "", nil, fmt.Errorf("%s: %s: %s", url, resp.Status, body)
	}
	return string(body), resp.Header, nil
}

// ghosts watches a kind no member serves: its source is parked in every member.
func ghosts() mcsource.Source {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "ghost.mcr.dev", Version: "v1", Kind: "Ghost"})
	return mcsource.Kind[*unstructured.Unstructured](u, mchandler.TypedEnqueueRequestForObject[*unstructured.Unstructured]())
}

func findFleetCluster(d mcmanager.FleetDebug, name multicluster.ClusterName) (mcmanager.FleetCluster, bool) {
	i := slices.IndexFunc(d.Clusters, func(c mcmanager.FleetCluster) bool { return c.Name == name })
	if i < 0 {
		return mcmanager.FleetCluster{}, false
	}
	return d.Clusters[i], true
}

func findController(d mcmanager.FleetDebug, name string) (mcmanager.ControllerDebug, bool) {
	i := slices.IndexFunc(d.Controllers, func(c mcmanager.ControllerDebug) bool { return c.Name == name })
	if i < 0 {
		return mcmanager.ControllerDebug{}, false
	}
	return d.Controllers[i], true
}

// TestFleetDebugEndpoint GETs /debug/fleet from a running manager's metrics server over real
// members: two engaged ones, one whose apiserver is down. A controller that watches ConfigMaps
// syncs both engaged members, holds a queue while its worker is blocked and fails one request
// with an error that quotes a credential; one that watches a kind no member serves is parked.
// The JSON and the text tables say all of that, and nothing of the members' credentials.
func TestFleetDebugEndpoint(t *testing.T) {
	flaky := fleet.Member("flaky")
	stopMember(t, flaky)
	a, b, down := fleet.Member("a").Config(), fleet.Member("b").Config(), flaky.Config()
	p := newFixedProvider(t, map[string]*rest.Config{"a": a, "b": b, "down": down})

	addr := freeAddress(t)
	mgr, err := mcmanager.New(fleet.Member("host").Config(), p, mcmanager.Options{
		Logger:                 logr.Discard(),
		Metrics:                metricsserver.Options{BindAddress: addr},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := mcmanager.AddFleetDebugHandler(mgr, ""); err != nil {
		t.Fatal(err)
	}

	// The ConfigMaps controller's only worker blocks on hold-* ConfigMaps until the test ends,
	// so that what comes after them waits in the queue.
	ns := namespace(t, "a")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	cms, err := mccontroller.New("debug-configmaps", mgr, mccontroller.Options{
		Reconciler: mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			if req.Namespace == ns && strings.HasPrefix(req.Name, "hold-") {
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			if req.Namespace == ns && req.Name == "fail" {
				return reconcile.Result{}, fmt.Errorf("calling the inventory: Get %q: connection refused", "https://robot:"+debugSecret+"@inventory.example/items")
			}
			return reconcile.Result{}, nil
		}),
		MaxConcurrentReconciles: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.MultiClusterWatch(configMaps()); err != nil {
		t.Fatal(err)
	}
	ghost, err := mccontroller.New("debug-ghosts", mgr, mccontroller.Options{
		Reconciler: mcreconcile.Func(func(context.Context, mcreconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil }),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ghost.MultiClusterWatch(ghosts()); err != nil {
		t.Fatal(err)
	}
	runManager(t, mgr)

	url := "http://" + addr + mcmanager.DefaultFleetDebugPath
	var d mcmanager.FleetDebug
	testcheck.WaitFor(t, "the endpoint to show a and b engaged and synced by debug-configmaps", func() bool {
		body, _, err := get(url+"?format=json", "")
		d = mcmanager.FleetDebug{} // Unmarshal would keep fields of earlier answers
		if err != nil || json.Unmarshal([]byte(body), &d) != nil {
			return false
		}
		c, ok := findController(d, "debug-configmaps")
		return ok && len(c.Clusters) == 2 && c.Clusters[0].Synced && c.Clusters[1].Synced && d.Listed
	})
	createConfigMap(t, "a", ns, "fail")
	testcheck.WaitFor(t, "the endpoint to show a's last reconcile error", func() bool {
		body, _, err := get(url+"?format=json", "")
		d = mcmanager.FleetDebug{} // Unmarshal would keep fields of earlier answers
		if err != nil || json.Unmarshal([]byte(body), &d) != nil {
			return false
		}
		c, _ := findController(d, "debug-configmaps")
		return len(c.Clusters) == 2 && c.Clusters[0].LastError != ""
	})
	for i := range 3 {
		createConfigMap(t, "a", ns, fmt.Sprintf("hold-%d", i))
	}
	testcheck.WaitFor(t, "the endpoint to show ConfigMaps waiting in the queue", func() bool {
		body, _, err := get(url+"?format=json", "")
		d = mcmanager.FleetDebug{} // Unmarshal would keep fields of earlier answers
		if err != nil || json.Unmarshal([]byte(body), &d) != nil {
			return false
		}
		c, _ := findController(d, "debug-configmaps")
		return c.QueueDepth >= 2
	})

	if d.Provider != "fixed-provider" || !d.Elected {
		t.Errorf("provider %q, elected %v: want fixed-provider, elected (no leader election)", d.Provider, d.Elected)
	}
	for _, name := range []multicluster.ClusterName{"a", "b"} {
		c, ok := findFleetCluster(d, name)
		switch {
		case !ok:
			t.Errorf("cluster %s is not listed: %+v", name, d.Clusters)
		case c.State != mcmanager.ClusterEngaged || c.EngagedSince == nil || c.Provider != "fixed-provider":
			t.Errorf("cluster %s: %+v, want engaged by fixed-provider with a time", name, c)
		case !c.Synced || len(c.Unsynced) != 0 || !slices.Equal(c.Parked, []string{"debug-ghosts: kind source: *unstructured.Unstructured"}):
			t.Errorf("cluster %s: synced %v, unsynced %v, parked %q; want synced with debug-ghosts' source parked", name, c.Synced, c.Unsynced, c.Parked)
		}
	}
	if c, ok := findFleetCluster(d, "down"); !ok || c.State != mcmanager.ClusterFailing || !strings.Contains(c.LastError, "did not answer") || c.EngagedSince != nil {
		t.Errorf("cluster down: %+v, want failing because it did not answer", c)
	}
	g, _ := findController(d, "debug-ghosts")
	if !g.Running || len(g.Clusters) != 2 {
		t.Fatalf("controller debug-ghosts: %+v, want running with two clusters", g)
	}
	for _, cc := range g.Clusters {
		if len(cc.Sources) != 1 || !cc.Synced || !cc.Sources[0].Synced || !strings.HasPrefix(cc.Sources[0].Parked, "the cluster does not serve ") {
			t.Errorf("debug-ghosts in %s: %+v, want its one source parked because the kind is not served", cc.Name, cc)
		}
	}
	cms2, _ := findController(d, "debug-configmaps")
	for _, cc := range cms2.Clusters {
		switch cc.Name {
		case "a":
			if !strings.Contains(cc.LastError, "connection refused") || strings.Contains(cc.LastError, debugSecret) || cc.LastErrorTime == nil {
				t.Errorf("debug-configmaps in a: last error %q at %v, want the redacted error with its time", cc.LastError, cc.LastErrorTime)
			}
		default:
			if cc.LastError != "" {
				t.Errorf("debug-configmaps in %s: last error %q, want none", cc.Name, cc.LastError)
			}
		}
	}

	// The same through Accept, and as text.
	body, header, err := get(url, "application/json")
	if err != nil || !strings.HasPrefix(header.Get("Content-Type"), "application/json") || json.Unmarshal([]byte(body), &mcmanager.FleetDebug{}) != nil {
		t.Errorf("Accept: application/json: %v, %s", err, header.Get("Content-Type"))
	}
	text, header, err := get(url, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(header.Get("Content-Type"), "text/plain") {
		t.Errorf("default Content-Type %q, want text/plain", header.Get("Content-Type"))
	}
	for _, want := range [][]string{
		{"provider fixed-provider (listed)", "elected"},
		{"CLUSTER", "STATE", "ENGAGED-SINCE", "OWNER", "SYNCED", "QUEUE", "LAST-ERROR"},
		{"a ", "Engaged", "fixed-provider", " yes "},
		{"down ", "Failing", "did not answer"},
		{"debug-configmaps ", "yes"},
		{"debug-ghosts ", "yes", " -"},
		{"CLUSTER", "PARKED UNTIL THE CLUSTER SERVES ITS KIND"},
		{"b ", "debug-ghosts: kind source: *unstructured.Unstructured"},
		{"CONTROLLER", "CLUSTER", "LAST RECONCILE ERROR AT", "ERROR"},
		{"debug-configmaps ", "a ", "ago)", "connection refused", "REDACTED"},
	} {
		if !slices.ContainsFunc(strings.Split(text, "\n"), func(line string) bool {
			return !slices.ContainsFunc(want, func(part string) bool { return !strings.Contains(line, part) })
		}) {
			t.Errorf("no line of the text has all of %q:\n%s", want, text)
		}
	}

	// Names and reasons only: none of the members' credentials, nor one a reconciler quoted.
	for _, out := range []string{text, body} {
		if strings.Contains(out, debugSecret) {
			t.Fatalf("the endpoint shows the credential a reconcile error quoted:\n%s", out)
		}
		for _, cfg := range []*rest.Config{a, b, down} {
			for _, secret := range [][]byte{cfg.KeyData, cfg.CertData} {
				if strings.Contains(out, strings.TrimSpace(string(secret))) || strings.Contains(out, "PRIVATE KEY") {
					t.Fatal("the endpoint shows a member's credentials")
				}
			}
		}
	}
}

// TestFleetDebugShowsOwnersUnderSharding runs two sharded replicas over the same four members:
// each shows the clusters it owns as engaged by itself and the others as offered, owned by the
// other replica, and the two agree.
func TestFleetDebugShowsOwnersUnderSharding(t *testing.T) {
	members := map[string]*rest.Config{}
	// Rendezvous hashing gives r1 three of these names and r2 one.
	for name, member := range map[string]string{"m1": "a", "m2": "a", "m3": "b", "m4": "b"} {
		members[name] = fleet.Member(member).Config()
	}
	group := fmt.Sprintf("debug-%d", time.Now().UnixNano())
	replicas := map[string]mcmanager.Manager{}
	for _, id := range []string{"r1", "r2"} {
		mgr, err := mcmanager.New(fleet.Member("host").Config(), newFixedProvider(t, members), mcmanager.Options{
			Logger:                 logr.Discard(),
			Metrics:                metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress: "0",
		}, mcmanager.WithSharding(sharding.Options{
			Group: group, Namespace: "default", Identity: id,
			LeaseDuration: 3 * time.Second, RetryPeriod: 200 * time.Millisecond,
		}))
		if err != nil {
			t.Fatal(err)
		}
		runManager(t, mgr)
		replicas[id] = mgr
	}

	var problem string
	agree := func() bool {
		views := map[string]mcmanager.FleetDebug{}
		for id, mgr := range replicas {
			d, err := mcmanager.DebugFleet(mgr)
			if err != nil {
				t.Fatal(err)
			}
			if d.Replica != id {
				t.Fatalf("replica %s reports itself as %q", id, d.Replica)
			}
			views[id] = d
		}
		owned := map[string]int{}
		for name := range members {
			var engagedOn []string
			for id, d := range views {
				c, ok := findFleetCluster(d, multicluster.ClusterName(name))
				switch {
				case !ok:
					problem = fmt.Sprintf("%s does not list %s", id, name)
					return false
				case c.State == mcmanager.ClusterEngaged && c.Owner == id:
					engagedOn = append(engagedOn, id)
				case c.State == mcmanager.ClusterOffered && c.Owner != id && c.Owner != "":
				default:
					problem = fmt.Sprintf("%s shows %s as %+v", id, name, c)
					return false
				}
			}
			if len(engagedOn) != 1 {
				problem = fmt.Sprintf("%s is engaged on %v", name, engagedOn)
				return false
			}
			// The replica that does not engage it names the one that does.
			for id, d := range views {
				if c, _ := findFleetCluster(d, multicluster.ClusterName(name)); id != engagedOn[0] && c.Owner != engagedOn[0] {
					problem = fmt.Sprintf("%s says %s is owned by %s, but %s engages it", id, name, c.Owner, engagedOn[0])
					return false
				}
			}
			owned[engagedOn[0]]++
		}
		if owned["r1"] == 0 || owned["r2"] == 0 {
			problem = fmt.Sprintf("one replica owns everything: %v", owned)
			return false
		}
		return true
	}
	// The bound only ends a hung test: membership and Lease rounds take a few seconds.
	for deadline := time.Now().Add(2 * time.Minute); !agree(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the replicas do not agree on the owners: %s", problem)
		}
	}
}
