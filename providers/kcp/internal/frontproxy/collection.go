// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package frontproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-dev/logicalcluster/v3"
)

// initialEventsEndAnnotation marks the bookmark that ends the initial events of a streaming list.
const initialEventsEndAnnotation = metav1.InitialEventsAnnotationKey

// upstreamResponse is a backend's answer that is not a success, passed on to the client as is.
type upstreamResponse struct {
	code        int
	contentType string
	body        []byte
}

func (u *upstreamResponse) write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", u.contentType)
	w.WriteHeader(u.code)
	_, _ = w.Write(u.body)
}

// get sends a GET for apiPath with query to the backend, asking for JSON.
func (b *backend) get(ctx context.Context, apiPath string, query url.Values, accept string) (*http.Response, error) {
	u := *b.host
	u.Path = strings.TrimSuffix(u.Path, "/") + apiPath
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	return b.client.Do(req)
}

// jsonAccept keeps the JSON media types of an Accept header (with their parameters, such as
// as=PartialObjectMetadataList), because the front-proxy rewrites JSON only.
func jsonAccept(accept string) string {
	var kept []string
	for _, part := range strings.Split(accept, ",") {
		mediaType, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(mediaType) == "application/json" {
			kept = append(kept, strings.TrimSpace(part))
		}
	}
	if len(kept) == 0 {
		return "application/json"
	}
	return strings.Join(kept, ",")
}

// decodeJSON decodes JSON keeping numbers as they are.
func decodeJSON(data []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(into)
}

// admit reports whether obj, served by backend b, belongs to the logical cluster only (any
// cluster when only is empty), and annotates it with its logical cluster: the one it names
// itself, or b's home cluster.
func admit(obj map[string]any, b *backend, only string) bool {
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	annotations, _ := meta["annotations"].(map[string]any)
	cluster := b.name
	if v, _ := annotations[logicalcluster.AnnotationKey].(string); v != "" {
		cluster = v
	}
	if only != "" && cluster != only {
		return false
	}
	if annotations == nil {
		annotations = map[string]any{}
		meta["annotations"] = annotations
	}
	annotations[logicalcluster.AnnotationKey] = cluster
	return true
}

func resourceVersionOf(obj map[string]any) string {
	meta, _ := obj["metadata"].(map[string]any)
	rv, _ := meta["resourceVersion"].(string)
	return rv
}

// backendQuery returns the query for backend b of a merged list or watch. With a composite
// resourceVersion each backend resumes from its own version. A plain version other than "0"
// means nothing to a merge: the backend serves its latest state.
func backendQuery(q url.Values, b *backend, rvs resourceVersions, merged bool) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	out.Del("continue")
	out.Del("limit")
	if !merged {
		return out
	}
	rv := q.Get("resourceVersion")
	switch {
	case rvs != nil:
		if own, ok := rvs[b.name]; ok {
			out.Set("resourceVersion", own)
			break
		}
		out.Del("resourceVersion")
		out.Del("resourceVersionMatch")
	case rv != "" && rv != "0":
		out.Del("resourceVersion")
		out.Del("resourceVersionMatch")
	}
	if out.Get("resourceVersionMatch") == string(metav1.ResourceVersionMatchExact) {
		// Exact is not served on a merge (see the package documentation).
		out.Del("resourceVersionMatch")
		out.Del("resourceVersion")
	}
	return out
}

// list serves a LIST from backends: the wildcard merge (only empty; resourceVersion composite)
// or one logical cluster of one backend (only set; the backend's resourceVersion).
func (s *Server) list(w http.ResponseWriter, r *http.Request, req apiRequest, backends []*backend, only string) {
	merged := only == ""
	q := r.URL.Query()
	rvs, _ := decodeResourceVersions(q.Get("resourceVersion"))
	accept := jsonAccept(r.Header.Get("Accept"))

	type result struct {
		list        map[string]any
		contentType string
		failed      *upstreamResponse
		err         error
	}
	results := make([]result, len(backends))
	var wg sync.WaitGroup
	for i, b := range backends {
		wg.Go(func() {
			res := &results[i]
			resp, err := b.get(r.Context(), req.path, backendQuery(q, b, rvs, merged), accept)
			if err != nil {
				res.err = fmt.Errorf("listing %s on backend %s: %w", req.path, b.name, err)
				return
			}
			defer func() { _ = resp.Body.Close() }()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				res.err = fmt.Errorf("listing %s on backend %s: %w", req.path, b.name, err)
				return
			}
			res.contentType = resp.Header.Get("Content-Type")
			if resp.StatusCode != http.StatusOK {
				res.failed = &upstreamResponse{code: resp.StatusCode, contentType: res.contentType, body: body}
				return
			}
			if err := decodeJSON(body, &res.list); err != nil {
				res.err = fmt.Errorf("decoding the list of %s from backend %s: %w", req.path, b.name, err)
			}
		})
	}
	wg.Wait()
	for _, res := range results {
		switch {
		case res.failed != nil:
			res.failed.write(w)
			return
		case res.err != nil:
			writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, res.err.Error())
			return
		}
	}

	items := []any{}
	reached := resourceVersions{}
	for i, res := range results {
		reached[backends[i].name] = resourceVersionOf(res.list)
		raw, _ := res.list["items"].([]any)
		for _, item := range raw {
			if obj, ok := item.(map[string]any); ok && admit(obj, backends[i], only) {
				items = append(items, obj)
			}
		}
	}
	out := results[0].list
	rv := resourceVersionOf(out)
	if merged {
		rv = reached.encode()
	}
	out["metadata"] = map[string]any{"resourceVersion": rv}
	out["items"] = items
	w.Header().Set("Content-Type", results[0].contentType)
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(out)
}

// watchEvent is one event of a watch stream in JSON.
type watchEvent struct {
	Type   string         `json:"type"`
	Object map[string]any `json:"object"`
}

// upstreamEvent is an event read from one backend's watch, or the end of that watch.
type upstreamEvent struct {
	backend int
	event   watchEvent
	end     error // set when the backend's stream ended (io.EOF when it ended cleanly)
}

// watch serves a WATCH from backends: the wildcard merge (only empty) or one logical cluster of
// one backend (only set, passed through with the backend's resourceVersions).
func (s *Server) watch(w http.ResponseWriter, r *http.Request, req apiRequest, backends []*backend, only string) {
	merged := only == ""
	q := r.URL.Query()
	streaming := q.Get("sendInitialEvents") == "true"
	clientBookmarks := q.Get("allowWatchBookmarks") == "true"
	rvs, composite := decodeResourceVersions(q.Get("resourceVersion"))
	if merged && !streaming {
		rv := q.Get("resourceVersion")
		complete := composite
		for _, b := range backends {
			_, has := rvs[b.name]
			complete = complete && has
		}
		if rv != "" && rv != "0" && !complete {
			// An object's resourceVersion cannot resume several backends exactly.
			writeStatus(w, http.StatusGone, metav1.StatusReasonExpired,
				fmt.Sprintf("resourceVersion %q cannot resume a watch of all logical clusters; list again", rv))
			return
		}
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, "streaming is not supported")
		return
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	accept := jsonAccept(r.Header.Get("Accept"))
	bodies := make([]io.ReadCloser, 0, len(backends))
	defer func() {
		for _, b := range bodies {
			_ = b.Close()
		}
	}()
	contentType := "application/json"
	for _, b := range backends {
		bq := backendQuery(q, b, rvs, merged)
		if merged {
			// Backend bookmarks carry the versions the composite is made of.
			bq.Set("allowWatchBookmarks", "true")
		}
		resp, err := b.get(ctx, req.path, bq, accept)
		if err != nil {
			writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable,
				fmt.Sprintf("watching %s on backend %s: %v", req.path, b.name, err))
			return
		}
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			(&upstreamResponse{code: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: body}).write(w)
			return
		}
		contentType = resp.Header.Get("Content-Type")
		bodies = append(bodies, resp.Body)
	}
	if merged {
		defer s.watchOpened(req.groupResource())()
	}

	events := make(chan upstreamEvent)
	var readers sync.WaitGroup
	defer func() {
		cancel()
		for _, b := range bodies {
			_ = b.Close()
		}
		readers.Wait()
	}()
	for i, body := range bodies {
		readers.Go(func() { readEvents(ctx, i, body, events) })
	}

	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	send := func(events ...watchEvent) bool {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf) // one line per event
		for _, ev := range events {
			if err := enc.Encode(ev); err != nil {
				return false
			}
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			return false
		}
		flusher.Flush()
		return true
	}

	// reached is the composite version of what was sent so far; pending lists the backends
	// whose initial events of a streaming list have not ended yet.
	reached := resourceVersions{}
	for _, b := range backends {
		if rv, ok := rvs[b.name]; ok {
			reached[b.name] = rv
		}
	}
	pending := map[int]bool{}
	if streaming {
		for i := range backends {
			pending[i] = true
		}
	}
	bookmark := func(like map[string]any, initialEnd bool) watchEvent {
		meta := map[string]any{"resourceVersion": reached.encode()}
		if initialEnd {
			meta["annotations"] = map[string]any{initialEventsEndAnnotation: "true"}
		}
		return watchEvent{Type: "BOOKMARK", Object: map[string]any{
			"apiVersion": like["apiVersion"], "kind": like["kind"], "metadata": meta,
		}}
	}

	for {
		var ev upstreamEvent
		select {
		case <-ctx.Done():
			return
		case ev = <-events:
		}
		if ev.end != nil {
			// One backend's watch ended (timeout, restart): end the merge; the client resumes
			// from the last composite version.
			return
		}
		b := backends[ev.backend]
		obj := ev.event.Object
		switch ev.event.Type {
		case "ERROR":
			send(ev.event)
			return
		case "BOOKMARK":
			if !merged {
				if clientBookmarks || isInitialEventsEnd(obj) {
					if !send(ev.event) {
						return
					}
				}
				continue
			}
			reached[b.name] = resourceVersionOf(obj)
			if pending[ev.backend] && isInitialEventsEnd(obj) {
				delete(pending, ev.backend)
				if len(pending) == 0 && !send(bookmark(obj, true)) {
					return
				}
				continue
			}
			if len(pending) == 0 && clientBookmarks && !send(bookmark(obj, false)) {
				return
			}
		default:
			if !admit(obj, b, only) {
				continue
			}
			if !merged {
				if !send(ev.event) {
					return
				}
				continue
			}
			if !pending[ev.backend] {
				reached[b.name] = resourceVersionOf(obj)
			}
			out := []watchEvent{ev.event}
			if len(pending) == 0 && clientBookmarks {
				// The bookmark makes the composite version the reflector's last version, so
				// that it resumes every backend exactly.
				out = append(out, bookmark(obj, false))
			}
			if !send(out...) {
				return
			}
		}
	}
}

func isInitialEventsEnd(obj map[string]any) bool {
	meta, _ := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	return annotations[initialEventsEndAnnotation] == "true"
}

// readEvents decodes the watch events of one backend into events until the stream or ctx ends.
func readEvents(ctx context.Context, i int, body io.Reader, events chan<- upstreamEvent) {
	dec := json.NewDecoder(body)
	dec.UseNumber()
	for {
		var ev watchEvent
		err := dec.Decode(&ev)
		if err == nil && ev.Object == nil {
			err = errors.New("watch event without an object")
		}
		next := upstreamEvent{backend: i, event: ev, end: err}
		select {
		case events <- next:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}
