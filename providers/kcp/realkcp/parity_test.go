// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package realkcp_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kcp-dev/logicalcluster/v3"
	"github.com/kcp-dev/multicluster-provider/pkg/handlers"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"github.com/kcp-dev/sdk/apis/tenancy/initialization"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"

	mcr "mcr.dev/core"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kcp"
	"mcr.dev/providers/kcp/kcptest"
)

// A handler written for kcp-dev's multicluster-provider is a kcp.Handler as it is.
var _ kcp.Handler = handlers.Handler(nil)

// endpointsKey is the key of the test ConfigMap's data that lists the endpoint URLs, one a line.
const endpointsKey = "urls"

// configMapURLs is the test's Options.EndpointURLs: the lines of the ConfigMap's "urls" key.
func configMapURLs(obj client.Object) ([]string, error) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return nil, fmt.Errorf("%T is not a ConfigMap", obj)
	}
	v, ok := cm.Data[endpointsKey]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s/%s has no key %q", cm.Namespace, cm.Name, endpointsKey)
	}
	return strings.Fields(v), nil
}

// TestEndpointsFromAnyObject runs the provider on endpoints listed by an object the operator
// owns, a ConfigMap in the provider workspace that lists the APIExport's virtual workspace URL,
// and checks that: the consumers are engaged through that URL; a ConfigMap whose URLs cannot be
// read is reported on it (Event, metric) and keeps the consumers engaged; a bad URL is reported
// on it and disengages the consumers; the good URL engages them again.
func TestEndpointsFromAnyObject(t *testing.T) {
	provider := newExport(t)
	consumers := newConsumers(t, provider, 2)
	urls, err := server.WaitEndpointURLs(t.Context(), provider.Path, exportName)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := server.Client(provider.Path)
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "endpoints"}}
	if err := admin.Create(t.Context(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "widgets-endpoints"},
		Data:       map[string]string{endpointsKey: strings.Join(urls, "\n")},
	}
	if err := admin.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	setData := func(data map[string]string) {
		t.Helper()
		eventually(t, "updating ConfigMap "+cm.Name, func() error {
			if err := admin.Get(t.Context(), client.ObjectKeyFromObject(cm), cm); err != nil {
				return err
			}
			cm.Data = data
			return admin.Update(t.Context(), cm)
		})
	}

	logs := testLogs(t)
	opts := providerOptions(logs)
	opts.EndpointObject = &corev1.ConfigMap{}
	opts.EndpointURLs = configMapURLs
	p, err := kcp.New(server.WorkspaceConfig(provider.Path), ns.Name+"/"+cm.Name, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec := providertest.Start(t, p, waitTimeout).Recorder
	engaged := map[multicluster.ClusterName]*providertest.Engagement{}
	for _, c := range consumers {
		e := rec.WaitEngaged(t, p, c.name(), waitTimeout)
		want := strings.TrimRight(urls[0], "/") + "/clusters/" + c.Cluster.String()
		if got := e.Cluster.GetConfig().Host; got != want {
			t.Errorf("cluster %s talks to %s, want %s", c.name(), got, want)
		}
		engaged[c.name()] = e
	}

	// URLs that cannot be read are a problem of the ConfigMap; the endpoint stays.
	invalid := testutil.ToFloat64(kcp.Errors.WithLabelValues(kcp.ReasonInvalidEndpointObject))
	setData(map[string]string{"other": "x"})
	waitEvent(t, provider.Path, cm, kcp.ReasonInvalidEndpointObject, `has no key "urls"`)
	if got := testutil.ToFloat64(kcp.Errors.WithLabelValues(kcp.ReasonInvalidEndpointObject)); got <= invalid {
		t.Errorf("Errors{reason=%s} = %v, want more than %v", kcp.ReasonInvalidEndpointObject, got, invalid)
	}
	if _, err := logs.Find("cannot be engaged", kcp.ReasonInvalidEndpointObject, "keeping the 1 endpoints"); err != nil {
		t.Error(err)
	}
	for _, c := range consumers {
		if !engaged[c.name()].Alive() {
			t.Errorf("%s was disengaged although the ConfigMap's URLs could not be read", c.name())
		}
	}

	// A bad URL replaces the good one: it is reported, never dialed, and the consumers go.
	bad := strings.TrimRight(urls[0], "/") + "?token=planted-in-the-url"
	setData(map[string]string{endpointsKey: bad})
	waitEvent(t, provider.Path, cm, kcp.ReasonEndpointUnavailable, "is refused")
	for _, c := range consumers {
		rec.WaitDisengaged(t, p, c.name(), engaged[c.name()], waitTimeout)
	}
	if line, err := logs.Find("planted-in-the-url"); err == nil {
		t.Errorf("a log line quotes the bad URL's query: %s", line)
	}

	// The good URL again: the consumers are engaged again.
	setData(map[string]string{endpointsKey: urls[0]})
	for _, c := range consumers {
		rec.WaitReengaged(t, p, c.name(), engaged[c.name()], waitTimeout)
	}
}

// waitEvent waits for an Event in workspace ws about obj with the reason and a note that
// contains part.
func waitEvent(t *testing.T, ws logicalcluster.Path, obj client.Object, reason, part string) {
	t.Helper()
	c, err := server.Client(ws)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "a "+reason+" Event on "+obj.GetName(), func() error {
		list := &eventsv1.EventList{}
		if err := c.List(t.Context(), list, client.InNamespace(obj.GetNamespace())); err != nil {
			return err
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Name != obj.GetName() {
				continue
			}
			if e.Reason == reason && strings.Contains(e.Note, part) {
				return nil
			}
			seen = append(seen, e.Reason+": "+e.Note)
		}
		return fmt.Errorf("Events on it: %q", seen)
	})
}

// handlerCall is one call of a Handler.
type handlerCall struct {
	event   string
	name    string
	cluster logicalcluster.Name
	labels  map[string]string // of the new object
	old     map[string]string // of the old object, on updates
}

// recordingHandler records the calls it gets.
type recordingHandler struct {
	mu    sync.Mutex
	calls []handlerCall
}

func (h *recordingHandler) record(event string, old, obj client.Object) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := handlerCall{event: event, name: obj.GetName(), cluster: logicalcluster.From(obj), labels: obj.GetLabels()}
	if old != nil {
		c.old = old.GetLabels()
	}
	h.calls = append(h.calls, c)
}

func (h *recordingHandler) OnAdd(obj client.Object)               { h.record("add", nil, obj) }
func (h *recordingHandler) OnUpdate(oldObj, newObj client.Object) { h.record("update", oldObj, newObj) }
func (h *recordingHandler) OnDelete(obj client.Object)            { h.record("delete", nil, obj) }

// find returns the first call that matches.
func (h *recordingHandler) find(match func(handlerCall) bool) (handlerCall, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.calls {
		if match(c) {
			return c, nil
		}
	}
	return handlerCall{}, fmt.Errorf("no such call among %d: %+v", len(h.calls), h.calls)
}

// panickingHandler panics on every call.
type panickingHandler struct{}

func (panickingHandler) OnAdd(client.Object)         { panic("OnAdd panics") }
func (panickingHandler) OnUpdate(_, _ client.Object) { panic("OnUpdate panics") }
func (panickingHandler) OnDelete(client.Object)      { panic("OnDelete panics") }

// TestHandlersSeeBindingLifecycle runs the provider with a handler that panics on every call
// and, after it, a recording one: the recording handler sees the add, the update (a label) and
// the delete of a consumer's APIBinding, each with the consumer's logical cluster in
// kcp.io/cluster; the panics are counted, and the provider engages and disengages the consumer
// all the same.
func TestHandlersSeeBindingLifecycle(t *testing.T) {
	provider := newExport(t)
	logs := testLogs(t)
	rec := &recordingHandler{}
	opts := providerOptions(logs)
	opts.Handlers = []kcp.Handler{panickingHandler{}, rec}
	p, err := kcp.New(server.WorkspaceConfig(provider.Path), exportName, opts)
	if err != nil {
		t.Fatal(err)
	}
	panics := testutil.ToFloat64(kcp.Errors.WithLabelValues("HandlerPanicked"))
	run := providertest.Start(t, p, waitTimeout)
	c := newConsumers(t, provider, 1)[0]
	e := run.Recorder.WaitEngaged(t, p, c.name(), waitTimeout)
	mine := func(event string, more func(handlerCall) bool) func() error {
		return func() error {
			_, err := rec.find(func(call handlerCall) bool {
				return call.event == event && call.name == c.binding && call.cluster == c.Cluster && (more == nil || more(call))
			})
			return err
		}
	}
	eventually(t, "OnAdd of the binding of "+c.Path.String(), mine("add", nil))

	admin := c.adminClient(t)
	eventually(t, "labeling the binding", func() error {
		b := &apisv1alpha1.APIBinding{}
		if err := admin.Get(t.Context(), client.ObjectKey{Name: c.binding}, b); err != nil {
			return err
		}
		patch := client.MergeFrom(b.DeepCopy())
		b.Labels = map[string]string{"parity": "labeled"}
		return admin.Patch(t.Context(), b, patch)
	})
	eventually(t, "OnUpdate adding the label", mine("update", func(call handlerCall) bool {
		return call.labels["parity"] == "labeled" && call.old["parity"] == ""
	}))

	if err := server.DeleteBinding(t.Context(), c.Path, c.binding); err != nil {
		t.Fatal(err)
	}
	eventually(t, "OnDelete of the binding", mine("delete", nil))
	run.Recorder.WaitDisengaged(t, p, c.name(), e, waitTimeout)

	// The panicking handler ran before the recording one on each of the three.
	if got := testutil.ToFloat64(kcp.Errors.WithLabelValues("HandlerPanicked")); got < panics+3 {
		t.Errorf("Errors{reason=HandlerPanicked} = %v, want at least %v", got, panics+3)
	}
	if _, err := logs.Find("A handler panicked", "OnDelete panics", string(c.name())); err != nil {
		t.Error(err)
	}
}

// TestInitializingWorkspaces runs an initializer controller on NewInitializing's provider and an
// mcr manager: two workspaces of a WorkspaceType with an initializer are engaged while they
// initialize, each through the initializing virtual workspace (with a cache that serves
// LogicalClusters only); the controller, once let go, creates a ConfigMap in each through the
// engaged cluster's client and removes the initializer; the workspaces become Ready, hold the
// ConfigMap, and are disengaged.
func TestInitializingWorkspaces(t *testing.T) {
	types := newWorkspace(t, "types")
	const typeName = "initialized"
	// Extending root:universal, as most types do, makes its workspaces allowed children of an
	// organization (the types workspace) and gives them kcp's APIs; they also wait for
	// universal's own initializers, which kcp runs.
	wt, err := server.CreateWorkspaceType(t.Context(), types.Path, typeName, tenancyv1alpha1.WorkspaceTypeSpec{
		Initializer: true,
		Extend: tenancyv1alpha1.WorkspaceTypeExtension{With: []tenancyv1alpha1.WorkspaceTypeReference{
			{Name: "universal", Path: "root"},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	initializer := initialization.InitializerForType(wt)
	var vwURLs []string
	for _, vw := range wt.Status.VirtualWorkspaces {
		vwURLs = append(vwURLs, string(vw.Type)+" "+vw.URL)
	}
	t.Logf("initializer %q, virtual workspaces %q", initializer, vwURLs)
	urls, err := kcp.InitializingURLs(wt)
	if err != nil || len(urls) != 1 || !strings.HasSuffix(urls[0], "/initializingworkspaces/"+string(initializer)) {
		t.Fatalf("InitializingURLs = %q, %v; want one URL of the initializing virtual workspace of %s", urls, err, initializer)
	}

	logs := testLogs(t)
	cfg := server.WorkspaceConfig(types.Path)
	p, err := kcp.NewInitializing(cfg, typeName, providerOptions(logs))
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := mcr.NewManager(cfg, p, mcr.Options{
		Scheme:                 kcptest.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 logs.Logger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	letGo := false
	err = mcr.NewControllerManagedBy(mgr).
		Named(uniqueName("initializer")).
		For(&corev1alpha1.LogicalCluster{}).
		Complete(mcr.Func(func(ctx context.Context, req mcr.Request) (mcr.Result, error) {
			mu.Lock()
			wait := !letGo
			mu.Unlock()
			if wait {
				return mcr.Result{RequeueAfter: 200 * time.Millisecond}, nil
			}
			cl, err := mgr.GetCluster(ctx, req.ClusterName)
			if err != nil {
				return mcr.Result{}, client.IgnoreNotFound(err)
			}
			return mcr.Result{}, initialize(ctx, cl.GetClient(), req, initializer)
		}))
	if err != nil {
		t.Fatal(err)
	}
	runManager(t, mgr)

	workspaces := make([]kcptest.Workspace, 2)
	for i := range workspaces {
		ws, err := server.CreateWorkspaceOfType(t.Context(), types.Path, uniqueName("initializing"), types.Path, typeName)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deleteWorkspaceNoWait(ws) })
		workspaces[i] = ws
	}
	for _, ws := range workspaces {
		name := multicluster.ClusterName(ws.Cluster)
		eventually(t, string(name)+" engaged while it initializes", func() error {
			cl, err := p.Get(t.Context(), name)
			if err != nil {
				return err
			}
			if want := strings.TrimRight(urls[0], "/") + "/clusters/" + ws.Cluster.String(); cl.GetConfig().Host != want {
				return fmt.Errorf("it talks to %s, want %s", cl.GetConfig().Host, want)
			}
			_, err = mgr.GetCluster(t.Context(), name)
			return err
		})
		cl, err := p.Get(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		// The cache serves LogicalClusters; the client reads the workspace live.
		lc := &corev1alpha1.LogicalCluster{}
		if err := cl.GetCache().Get(t.Context(), client.ObjectKey{Name: corev1alpha1.LogicalClusterName}, lc); err != nil {
			t.Errorf("reading the LogicalCluster of %s from its cache: %v", name, err)
		} else if !slices.Contains(lc.Status.Initializers, initializer) || lc.Status.Phase != corev1alpha1.LogicalClusterPhaseInitializing {
			t.Errorf("LogicalCluster of %s: phase %q, initializers %q; want Initializing with %q", name, lc.Status.Phase, lc.Status.Initializers, initializer)
		}
		if err := cl.GetCache().List(t.Context(), &corev1.ConfigMapList{}); err == nil || !strings.Contains(err.Error(), "reads live") {
			t.Errorf("listing ConfigMaps from the cache of %s: %v, want an error saying the client reads live", name, err)
		}
		if err := cl.GetClient().List(t.Context(), &corev1.NamespaceList{}); err != nil {
			t.Errorf("listing Namespaces live through %s: %v", name, err)
		}
		if _, ok := p.ClusterNameForPath(ws.Path); !ok {
			t.Errorf("ClusterNameForPath(%s) does not know the workspace", ws.Path)
		}
	}

	mu.Lock()
	letGo = true
	mu.Unlock()
	for _, ws := range workspaces {
		if err := server.WaitWorkspaceReady(t.Context(), ws); err != nil {
			t.Fatal(err)
		}
		admin, err := server.Client(ws.Path)
		if err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{}
		if err := admin.Get(t.Context(), client.ObjectKey{Namespace: initializedNamespace, Name: initializedConfigMap}, cm); err != nil {
			t.Errorf("the initializer's ConfigMap in %s: %v", ws.Path, err)
		} else if cm.Data["cluster"] != ws.Cluster.String() {
			t.Errorf("the initializer's ConfigMap in %s says cluster %q, want %q", ws.Path, cm.Data["cluster"], ws.Cluster)
		}
		name := multicluster.ClusterName(ws.Cluster)
		eventually(t, string(name)+" disengaged once initialized", func() error {
			if _, err := p.Get(t.Context(), name); !errors.Is(err, multicluster.ErrClusterNotFound) {
				return fmt.Errorf("Get: %v, want ErrClusterNotFound", err)
			}
			if _, err := mgr.GetCluster(t.Context(), name); !errors.Is(err, multicluster.ErrClusterNotFound) {
				return fmt.Errorf("the manager's GetCluster: %v, want ErrClusterNotFound", err)
			}
			return nil
		})
	}
}

// The namespace and ConfigMap the test's initializer creates in each workspace.
const (
	initializedNamespace = "initialized"
	initializedConfigMap = "initialized-by-mcr"
)

// initialize is the test's initializer: it creates a ConfigMap naming the logical cluster in the
// workspace of req, then removes initializer from the workspace's LogicalCluster.
func initialize(ctx context.Context, c client.Client, req mcr.Request, initializer corev1alpha1.LogicalClusterInitializer) error {
	lc := &corev1alpha1.LogicalCluster{}
	if err := c.Get(ctx, req.NamespacedName, lc); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !slices.Contains(lc.Status.Initializers, initializer) {
		return nil
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: initializedNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: initializedNamespace, Name: initializedConfigMap},
		Data:       map[string]string{"cluster": string(req.ClusterName)},
	}
	if err := c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	patch := client.MergeFrom(lc.DeepCopy())
	lc.Status.Initializers = initialization.EnsureInitializerAbsent(initializer, lc.Status.Initializers)
	return c.Status().Patch(ctx, lc, patch)
}
