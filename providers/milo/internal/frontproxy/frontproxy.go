// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package frontproxy is a test stand-in for the front door of a Milo apiserver: one HTTPS
// endpoint that serves the Milo API itself (Projects, Events, ...) from a real kube-apiserver,
// the "host", and every project's control plane under
//
//	/apis/resourcemanager.miloapis.com/v1alpha1/projects/<project>/control-plane/...
//
// from another real kube-apiserver of an envtest fleet, the project's "member". The tests of the
// Milo provider put it in front of real apiservers so that the provider's Project mode talks to
// the same URLs it talks to in a Milo installation, and its ProjectControlPlane mode can be
// pointed at it instead of the in-cluster service of each project.
//
// # What it serves faithfully
//
//   - The project control-plane paths: the prefix up to and including "/control-plane" is
//     stripped and the rest (discovery, OpenAPI, every API group, list, get, create, update,
//     delete, SelfSubjectReview, watch) is forwarded to the project's member with the member's
//     credentials; everything the member answers, errors included, comes back unchanged.
//   - Streaming: responses are flushed as they arrive (httputil.ReverseProxy with FlushInterval
//     -1), over HTTP/2 or HTTP/1.1, so watches, and caches that watch through the proxy, see
//     events at once.
//   - Authentication on project paths: a caller must present a bearer token the host accepts
//     (a TokenReview on the host, cached for Options.TokenReviewTTL); without one the proxy
//     answers 401 with a Status body, as an apiserver does. The caller's Authorization and
//     Impersonate-* headers never reach the member, so the member's credentials cannot be
//     borrowed under another identity.
//   - Everything else (Projects, ProjectControlPlanes, Events, discovery of the host) goes to
//     the host with the caller's own Authorization and Impersonate-* headers, so the host
//     authenticates and authorizes the caller by RBAC, as Milo would.
//   - A project without a route gets 404 with a Status body; removing a route (Unroute) ends the
//     project's open requests and watches, as a deleted project's control plane goes away.
//
// # What it does not serve
//
//   - Milo's own authorization of project access (its IAM): any caller the host authenticates
//     may use any routed project's control plane with the member's (admin) identity.
//   - Client-certificate authentication: TLS ends at the proxy, so callers must use bearer
//     tokens (as callers of Milo's public endpoint do).
//   - Other parent contexts of Milo (organizations/<id>/control-plane, users/<id>/control-plane)
//     and Milo's own resource storage per project: a project's control plane is a whole
//     kube-apiserver of the fleet.
//   - Protocol upgrades (exec, attach, port-forward) are not exercised by the tests and may not
//     work through it.
package frontproxy

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mcr.dev/core/envtest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"mcr.dev/core/providers/providertest"
)

// ProjectsPath is the path under which the project control planes are served; a project's
// control plane is ProjectsPath + "<project>" + ControlPlaneSuffix.
const (
	ProjectsPath       = "/apis/resourcemanager.miloapis.com/v1alpha1/projects/"
	ControlPlaneSuffix = "/control-plane"
)

// DefaultTokenReviewTTL is the default of Options.TokenReviewTTL.
const DefaultTokenReviewTTL = 30 * time.Second

// Options configure a Proxy.
type Options struct {
	// Host is an admin config of the Milo (host) apiserver. Requests outside the project
	// control-plane paths go to its Host with the caller's credentials; only its CA is used for
	// them. Its credentials are used for the TokenReviews that authenticate callers of project
	// paths. Required.
	Host *rest.Config

	// TokenReviewTTL is how long an accepted token is remembered.
	//
	// Defaults to DefaultTokenReviewTTL (30s).
	TokenReviewTTL time.Duration
}

// Proxy is a running front proxy. It is safe for concurrent use.
type Proxy struct {
	// TLSServer serves the proxy and supplies URL and CAData.
	*envtest.TLSServer
	host   *httputil.ReverseProxy
	review func(ctx context.Context, token string) error
	ttl    time.Duration

	mu     sync.Mutex
	routes map[string]*route
	tokens map[[sha256.Size]byte]time.Time // accepted tokens (hashed) until when

	requests sync.Map // project → *atomic.Int64
}

// route is the member behind one project.
type route struct {
	proxy  *httputil.ReverseProxy
	ctx    context.Context // ends when the route is removed
	cancel context.CancelFunc
}

// Start starts a proxy on 127.0.0.1 with a TLS certificate of its own (CAData); it serves HTTP/2
// and HTTP/1.1.
func Start(opts Options) (*Proxy, error) {
	if opts.Host == nil {
		return nil, errors.New("frontproxy: Options.Host is nil")
	}
	if opts.TokenReviewTTL <= 0 {
		opts.TokenReviewTTL = DefaultTokenReviewTTL
	}
	hostURL, err := url.Parse(opts.Host.Host)
	if err != nil {
		return nil, fmt.Errorf("frontproxy: host URL: %w", err)
	}
	// The host sees the caller's own credentials: the transport carries none.
	anonymous := &rest.Config{Host: opts.Host.Host, TLSClientConfig: rest.TLSClientConfig{
		CAData: opts.Host.CAData, CAFile: opts.Host.CAFile, ServerName: opts.Host.ServerName,
	}}
	hostTransport, err := rest.TransportFor(anonymous)
	if err != nil {
		return nil, fmt.Errorf("frontproxy: host transport: %w", err)
	}
	reviews, err := kubernetes.NewForConfig(opts.Host)
	if err != nil {
		return nil, fmt.Errorf("frontproxy: host client: %w", err)
	}
	p := &Proxy{
		ttl:    opts.TokenReviewTTL,
		routes: map[string]*route{},
		tokens: map[[sha256.Size]byte]time.Time{},
		review: func(ctx context.Context, token string) error {
			_, authenticated, err := providertest.ReviewToken(ctx, reviews, token)
			if err != nil {
				return fmt.Errorf("reviewing the token: %w", err)
			}
			if !authenticated {
				return errUnauthenticated
			}
			return nil
		},
	}
	p.host = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(hostURL)
		},
		Transport:     hostTransport,
		FlushInterval: -1,
		ErrorHandler:  proxyError("the Milo apiserver"),
		ErrorLog:      log.New(io.Discard, "", 0),
	}

	p.TLSServer = envtest.StartTLSServer(p)
	return p, nil
}

// Config returns a rest.Config that reaches the proxy (and so the host) with a bearer token.
func (p *Proxy) Config(token string) *rest.Config {
	return &rest.Config{
		Host:            p.URL(),
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: p.CAData()},
		QPS:             100,
		Burst:           200,
	}
}

// ControlPlaneURL returns the URL of a project's control plane behind the proxy.
func (p *Proxy) ControlPlaneURL(project string) string {
	return p.URL() + ProjectsPath + url.PathEscape(project) + ControlPlaneSuffix
}

// Route serves the control plane of project from member, with member's credentials, replacing
// an earlier route of the project (whose open requests end).
func (p *Proxy) Route(project string, member *rest.Config) error {
	target, err := url.Parse(member.Host)
	if err != nil {
		return fmt.Errorf("frontproxy: member URL of project %q: %w", project, err)
	}
	rt, err := rest.TransportFor(member)
	if err != nil {
		return fmt.Errorf("frontproxy: member transport of project %q: %w", project, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &route{ctx: ctx, cancel: cancel}
	r.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			_, rest, _ := splitControlPlanePath(pr.In.URL.Path)
			pr.SetURL(target)
			pr.Out.URL.Path = strings.TrimSuffix(target.Path, "/") + rest
			pr.Out.URL.RawPath = ""
			// The member's transport adds the member's credentials; the caller's must not
			// reach it, nor may the caller act as someone else there.
			pr.Out.Header.Del("Authorization")
			for name := range pr.Out.Header {
				if strings.HasPrefix(strings.ToLower(name), "impersonate-") {
					pr.Out.Header.Del(name)
				}
			}
		},
		Transport:     rt,
		FlushInterval: -1,
		ErrorHandler:  proxyError("the control plane of project " + project),
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	p.mu.Lock()
	old := p.routes[project]
	p.routes[project] = r
	p.mu.Unlock()
	if old != nil {
		old.cancel()
	}
	return nil
}

// Unroute stops serving the control plane of project and ends its open requests and watches.
func (p *Proxy) Unroute(project string) {
	p.mu.Lock()
	r := p.routes[project]
	delete(p.routes, project)
	p.mu.Unlock()
	if r != nil {
		r.cancel()
	}
}

// Requests returns how many requests the proxy has forwarded to the control plane of project.
func (p *Proxy) Requests(project string) int64 {
	if n, ok := p.requests.Load(project); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// Close ends every open request and stops the proxy.
func (p *Proxy) Close() {
	p.mu.Lock()
	for name, r := range p.routes {
		r.cancel()
		delete(p.routes, name)
	}
	p.mu.Unlock()
	p.TLSServer.Close()
}

// ServeHTTP routes one request: project control-plane paths to the project's member, everything
// else to the host.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	project, _, ok := splitControlPlanePath(r.URL.Path)
	if !ok {
		p.host.ServeHTTP(w, r)
		return
	}
	token, hasToken := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !hasToken || token == "" {
		writeStatus(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized")
		return
	}
	if err := p.authenticate(r.Context(), token); err != nil {
		if errors.Is(err, errUnauthenticated) {
			writeStatus(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized")
			return
		}
		writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, err.Error())
		return
	}
	p.mu.Lock()
	rt := p.routes[project]
	p.mu.Unlock()
	if rt == nil {
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound,
			fmt.Sprintf("the control plane of project %q is not available", project))
		return
	}
	n, _ := p.requests.LoadOrStore(project, &atomic.Int64{})
	n.(*atomic.Int64).Add(1)

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(rt.ctx, cancel)()
	rt.proxy.ServeHTTP(w, r.WithContext(ctx))
}

var errUnauthenticated = errors.New("the host did not authenticate the token")

// authenticate accepts a token the host authenticates, remembering it for the TTL.
func (p *Proxy) authenticate(ctx context.Context, token string) error {
	key := sha256.Sum256([]byte(token))
	now := time.Now()
	p.mu.Lock()
	until, ok := p.tokens[key]
	p.mu.Unlock()
	if ok && now.Before(until) {
		return nil
	}
	if err := p.review(ctx, token); err != nil {
		return err
	}
	p.mu.Lock()
	p.tokens[key] = now.Add(p.ttl)
	p.mu.Unlock()
	return nil
}

// splitControlPlanePath splits a project control-plane path into the project and the path the
// project's apiserver serves ("/" for the control plane's root).
func splitControlPlanePath(path string) (project, rest string, ok bool) {
	after, ok := strings.CutPrefix(path, ProjectsPath)
	if !ok {
		return "", "", false
	}
	project, tail, found := strings.Cut(after, "/")
	if !found || project == "" {
		return "", "", false
	}
	rest, ok = strings.CutPrefix("/"+tail, ControlPlaneSuffix)
	if !ok || (rest != "" && rest[0] != '/') {
		return "", "", false
	}
	if rest == "" {
		rest = "/"
	}
	return project, rest, true
}

// proxyError answers a request the proxy could not forward with a Status, as an apiserver
// answers when a backend is unavailable.
func proxyError(backend string) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		if r.Context().Err() != nil {
			return // the caller went away, or the route was removed
		}
		writeStatus(w, http.StatusBadGateway, metav1.StatusReasonServiceUnavailable,
			fmt.Sprintf("error reaching %s: %v", backend, err))
	}
}

// writeStatus writes a metav1.Status the way an apiserver does, so that client-go decodes it
// into a typed error.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  msg,
		Reason:   reason,
		Code:     int32(code),
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}
