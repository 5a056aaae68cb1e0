// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"

	"mcr.dev/providers/kcp/internal/frontproxy"
)

// rawGet sends a GET for path (below the shard's URL) with query, and returns the response.
func rawGet(ctx context.Context, t *testing.T, shard *frontproxy.Server, path string, query url.Values) *http.Response {
	t.Helper()
	hc, err := rest.HTTPClientFor(shard.Config())
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, shard.URL()+path+"?"+query.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

type rawList struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Items []corev1.ConfigMap `json:"items"`
}

type rawEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// nextEvent reads watch events until one satisfies match, failing after a minute.
func nextEvent(t *testing.T, events <-chan rawEvent, what string, match func(rawEvent, *corev1.ConfigMap) bool) *corev1.ConfigMap {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("watch ended before %s", what)
			}
			cm := &corev1.ConfigMap{}
			if err := json.Unmarshal(ev.Object, cm); err != nil {
				t.Fatalf("decoding a %s event: %v", ev.Type, err)
			}
			if match(ev, cm) {
				return cm
			}
		case <-timeout:
			t.Fatalf("no event: %s", what)
		}
	}
}

func streamEvents(t *testing.T, resp *http.Response) <-chan rawEvent {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("watch: %s: %s", resp.Status, body)
	}
	events := make(chan rawEvent)
	go func() {
		defer close(events)
		dec := json.NewDecoder(bufio.NewReader(resp.Body))
		for {
			var ev rawEvent
			if dec.Decode(&ev) != nil {
				return
			}
			events <- ev
		}
	}()
	t.Cleanup(func() { _ = resp.Body.Close() })
	return events
}

// TestFrontProxyWildcard checks the wildcard protocol of the test shard: a merged list whose
// objects carry their logical cluster, a composite resourceVersion from which a watch resumes
// every backend, 410 for a plain resourceVersion, and streaming lists.
func TestFrontProxyWildcard(t *testing.T) {
	lc := logicalcluster.Name(uniqueName(t, "lc"))
	configMap(t, "east", lc, "fp-pinned", nil)
	configMap(t, "west", "", "fp-west-home", nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	resp := rawGet(ctx, t, shardA, "/clusters/*/api/v1/namespaces/default/configmaps", url.Values{})
	var list rawList
	err := json.NewDecoder(resp.Body).Decode(&list)
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("wildcard list: %s, %v", resp.Status, err)
	}
	clusterOf := map[string]string{}
	for _, cm := range list.Items {
		if got := logicalcluster.From(&cm).String(); got == "" {
			t.Errorf("ConfigMap %s in the wildcard list has no kcp.io/cluster", cm.Name)
		} else if cm.Name != "kube-root-ca.crt" {
			clusterOf[cm.Name] = got
		}
	}
	if clusterOf["fp-pinned"] != lc.String() || clusterOf["fp-west-home"] != "west" {
		t.Errorf("wildcard list clusters = %v, want fp-pinned in %s and fp-west-home in west", clusterOf, lc)
	}
	if !strings.HasPrefix(list.Metadata.ResourceVersion, "mcr-kcp.") {
		t.Errorf("wildcard list resourceVersion %q is not composite", list.Metadata.ResourceVersion)
	}

	// A watch from the composite version sees changes on every backend, each followed by a
	// bookmark with the new composite version.
	events := streamEvents(t, rawGet(ctx, t, shardA, "/clusters/*/api/v1/namespaces/default/configmaps",
		url.Values{"watch": {"true"}, "resourceVersion": {list.Metadata.ResourceVersion}, "allowWatchBookmarks": {"true"}}))
	configMap(t, "west", lc, "fp-after-west", nil)
	nextEvent(t, events, "ADDED fp-after-west", func(ev rawEvent, cm *corev1.ConfigMap) bool {
		return ev.Type == "ADDED" && cm.Name == "fp-after-west" && logicalcluster.From(cm) == lc
	})
	bm := nextEvent(t, events, "a bookmark", func(ev rawEvent, _ *corev1.ConfigMap) bool { return ev.Type == "BOOKMARK" })
	if !strings.HasPrefix(bm.ResourceVersion, "mcr-kcp.") {
		t.Errorf("bookmark resourceVersion %q is not composite", bm.ResourceVersion)
	}
	configMap(t, "east", "", "fp-after-east", nil)
	nextEvent(t, events, "ADDED fp-after-east", func(ev rawEvent, cm *corev1.ConfigMap) bool {
		return ev.Type == "ADDED" && cm.Name == "fp-after-east" && logicalcluster.From(cm) == "east"
	})

	// A plain resourceVersion cannot resume a merged watch.
	resp = rawGet(ctx, t, shardA, "/clusters/*/api/v1/configmaps", url.Values{"watch": {"true"}, "resourceVersion": {"1"}})
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusGone {
		t.Errorf("watch from a plain resourceVersion: %s, want 410 Gone", resp.Status)
	}

	// A streaming list ends its initial events with one annotated bookmark.
	events = streamEvents(t, rawGet(ctx, t, shardA, "/clusters/*/api/v1/namespaces/default/configmaps", url.Values{
		"watch": {"true"}, "sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"}, "allowWatchBookmarks": {"true"},
	}))
	initial := map[string]bool{}
	end := nextEvent(t, events, "the initial-events-end bookmark", func(ev rawEvent, cm *corev1.ConfigMap) bool {
		if ev.Type == "ADDED" {
			initial[cm.Name] = true
		}
		return ev.Type == "BOOKMARK" && cm.Annotations[metav1.InitialEventsAnnotationKey] == "true"
	})
	for _, name := range []string{"fp-pinned", "fp-west-home", "fp-after-west", "fp-after-east"} {
		if !initial[name] {
			t.Errorf("the streaming list lacks %s: %v", name, initial)
		}
	}
	if !strings.HasPrefix(end.ResourceVersion, "mcr-kcp.") {
		t.Errorf("initial-events-end resourceVersion %q is not composite", end.ResourceVersion)
	}
}

// TestFrontProxyScoped checks the scoped paths of the test shard: a logical cluster sees its own
// objects only, creates through it belong to it, and unknown clusters are 404.
func TestFrontProxyScoped(t *testing.T) {
	lc := logicalcluster.Name(uniqueName(t, "lc"))
	if err := shardA.AddCluster(lc, "east"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shardA.RemoveCluster(lc) })
	configMap(t, "east", "", "fps-east-home", nil)
	c := clusterClient(t, "east", lc)

	created := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "fps-created"}}
	if err := c.Create(t.Context(), created); err != nil {
		t.Fatalf("creating through %s: %v", lc, err)
	}
	t.Cleanup(func() { _ = backends["east"].Delete(context.Background(), created) })
	onBackend := &corev1.ConfigMap{}
	if err := backends["east"].Get(t.Context(), client.ObjectKeyFromObject(created), onBackend); err != nil {
		t.Fatal(err)
	}
	if got := logicalcluster.From(onBackend); got != lc {
		t.Errorf("a ConfigMap created through %s is stored in logical cluster %q", lc, got)
	}
	if got := logicalcluster.From(created); got != lc {
		t.Errorf("the create response is annotated with logical cluster %q, want %s", got, lc)
	}
	names, err := listNames(t.Context(), c)
	if err != nil || len(names) != 1 || names[0] != "fps-created" {
		t.Errorf("scoped list = %q, %v; want only fps-created", names, err)
	}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "fps-east-home"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("scoped GET of another logical cluster's object: %v, want NotFound", err)
	}
	home := clusterClient(t, "east", "east")
	if err := home.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "fps-east-home"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("GET through the home cluster: %v", err)
	}
	unknown := clusterClient(t, "east", "no-such-cluster")
	if err := unknown.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "x"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("GET through an unknown logical cluster: %v, want NotFound", err)
	}
	cfg := shardA.Config()
	cfg.BearerToken = "wrong"
	cfg.Host += lc.Path().RequestPath()
	wrong, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := wrong.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "fps-created"}, &corev1.ConfigMap{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("GET with a wrong token: %v, want Unauthorized", err)
	}
}
