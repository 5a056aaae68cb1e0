// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package frontproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"mcr.dev/core/envtest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kcp-dev/logicalcluster/v3"
)

// DefaultPrefix is the default of Options.Prefix: where kcp serves the virtual workspace of an
// APIExport "mcr" in workspace "root" on a shard.
const DefaultPrefix = "/services/apiexport/root/mcr"

// Backend is one kube-apiserver behind the shard.
type Backend struct {
	// Name is the backend's home logical cluster: objects without a kcp.io/cluster annotation
	// belong to it. Required, and unique within the shard.
	Name logicalcluster.Name

	// Config reaches the apiserver with rights to everything that is proxied to it (an admin
	// config). Required.
	Config *rest.Config
}

// Options configure a Server.
type Options struct {
	// Prefix is the path of the virtual workspace on the shard; /clusters/... follows it.
	//
	// Defaults to DefaultPrefix.
	Prefix string

	// Backends are the apiservers of the shard. The first also serves discovery of
	// /clusters/*. At least one is required.
	Backends []Backend

	// Token, when set, is the bearer token every request must carry; others get 401.
	//
	// Defaults to "": no authentication.
	Token string

	// Authorization, when set instead of Token, authenticates and authorizes every request as
	// kcp does (see Authorization).
	//
	// Defaults to nil.
	Authorization *Authorization
}

// backend is a Backend ready to be called.
type backend struct {
	name      string
	host      *url.URL
	transport http.RoundTripper
	client    *http.Client
}

// Server is one shard of an APIExport virtual workspace. Create it with Start.
type Server struct {
	prefix   string
	token    string
	authz    *authorizer
	backends []*backend
	tls      *envtest.TLSServer

	mu       sync.Mutex
	clusters map[logicalcluster.Name]*backend // logical cluster → backend, homes included
	watches  map[string]int                   // open wildcard watches by resource
	requests map[string]int                   // wildcard lists and watches served, by resource
}

// Start starts a shard on a free local port with a self-signed certificate.
func Start(opts Options) (*Server, error) {
	if len(opts.Backends) == 0 {
		return nil, errors.New("frontproxy: no backends")
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	s := &Server{
		prefix:   "/" + strings.Trim(opts.Prefix, "/"),
		token:    opts.Token,
		clusters: map[logicalcluster.Name]*backend{},
		watches:  map[string]int{},
		requests: map[string]int{},
	}
	if opts.Authorization != nil {
		if opts.Token != "" {
			return nil, errors.New("frontproxy: Token and Authorization are exclusive")
		}
		var err error
		if s.authz, err = newAuthorizer(opts.Authorization); err != nil {
			return nil, err
		}
	}
	for _, b := range opts.Backends {
		if !b.Name.IsValid() || b.Config == nil {
			return nil, fmt.Errorf("frontproxy: backend %q: a valid logical cluster name and a config are required", b.Name)
		}
		if _, dup := s.clusters[b.Name]; dup {
			return nil, fmt.Errorf("frontproxy: backend %q given twice", b.Name)
		}
		host, err := url.Parse(b.Config.Host)
		if err != nil {
			return nil, fmt.Errorf("frontproxy: backend %q: %w", b.Name, err)
		}
		tr, err := rest.TransportFor(b.Config)
		if err != nil {
			return nil, fmt.Errorf("frontproxy: backend %q: %w", b.Name, err)
		}
		be := &backend{name: b.Name.String(), host: host, transport: tr, client: &http.Client{Transport: tr}}
		s.backends = append(s.backends, be)
		s.clusters[b.Name] = be
	}
	s.tls = envtest.StartTLSServer(s)
	return s, nil
}

// URL is the virtual workspace URL of the shard, as kcp writes it into an
// APIExportEndpointSlice's status.endpoints.
func (s *Server) URL() string { return s.tls.URL() + s.prefix }

// CAData returns the PEM certificate that clients must trust.
func (s *Server) CAData() []byte { return s.tls.CAData() }

// Config returns a client config for the shard's URL with its CA and the token. Clients add
// /clusters/... to Host.
func (s *Server) Config() *rest.Config {
	return &rest.Config{
		Host:            s.URL(),
		BearerToken:     s.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.CAData()},
	}
}

// Close stops the shard: open watches end, and further requests are refused.
func (s *Server) Close() {
	s.tls.Close()
}

// AddCluster makes logical cluster name, whose objects live on the backend whose home cluster
// is home (annotated kcp.io/cluster: name there), reachable under /clusters/<name>.
func (s *Server) AddCluster(name, home logicalcluster.Name) error {
	if !name.IsValid() {
		return fmt.Errorf("frontproxy: invalid logical cluster name %q", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.clusters[home]
	if !ok || b.name != home.String() {
		return fmt.Errorf("frontproxy: no backend %q", home)
	}
	if existing, ok := s.clusters[name]; ok && existing != b {
		return fmt.Errorf("frontproxy: logical cluster %q is on backend %q already", name, existing.name)
	}
	s.clusters[name] = b
	return nil
}

// RemoveCluster makes a logical cluster added with AddCluster unreachable. Home clusters stay.
func (s *Server) RemoveCluster(name logicalcluster.Name) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.clusters[name]; ok && b.name != name.String() {
		delete(s.clusters, name)
	}
}

// OpenWatches returns how many wildcard watches of a resource ("configmaps",
// "apibindings.apis.kcp.io") are open right now.
func (s *Server) OpenWatches(resource string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watches[resource]
}

// WildcardRequests returns how many wildcard lists and watches of a resource were served.
func (s *Server) WildcardRequests(resource string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[resource]
}

func (s *Server) watchOpened(resource string) (closed func()) {
	s.mu.Lock()
	s.watches[resource]++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.watches[resource]--
		s.mu.Unlock()
	}
}

// ServeHTTP routes <prefix>/clusters/<name>/<api path>.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.token != "" && r.Header.Get("Authorization") != "Bearer "+s.token {
		writeStatus(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized")
		return
	}
	if s.authz != nil && !s.authz.authorize(w, r) {
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, s.prefix+"/clusters/")
	if !ok {
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, fmt.Sprintf("the path %q is not part of the virtual workspace %s", r.URL.Path, s.prefix))
		return
	}
	clusterPart, apiPath, _ := strings.Cut(rest, "/")
	req := parseAPIPath("/" + apiPath)
	if clusterPart == logicalcluster.Wildcard.String() {
		s.serveWildcard(w, r, req)
		return
	}
	s.serveCluster(w, r, clusterPart, req)
}

func (s *Server) serveWildcard(w http.ResponseWriter, r *http.Request, req apiRequest) {
	switch {
	case !req.isResource:
		s.passthrough(w, r, s.backends[0], req, "")
	case req.name != "":
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, "a request to all logical clusters (/clusters/*) must address a collection")
	case r.Method != http.MethodGet:
		writeStatus(w, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "only list and watch are served for all logical clusters (/clusters/*)")
	default:
		s.mu.Lock()
		s.requests[req.groupResource()]++
		s.mu.Unlock()
		if isWatch(r) {
			s.watch(w, r, req, s.backends, "")
			return
		}
		s.list(w, r, req, s.backends, "")
	}
}

func (s *Server) serveCluster(w http.ResponseWriter, r *http.Request, name string, req apiRequest) {
	// kcp also accepts workspace paths here; the shard knows logical cluster names only.
	cluster := logicalcluster.Name(name)
	s.mu.Lock()
	b, ok := s.clusters[cluster]
	s.mu.Unlock()
	switch {
	case !ok:
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, fmt.Sprintf("logical cluster %q not found", name))
	case req.isCollection() && r.Method == http.MethodGet && isWatch(r):
		s.watch(w, r, req, []*backend{b}, cluster.String())
	case req.isCollection() && r.Method == http.MethodGet:
		s.list(w, r, req, []*backend{b}, cluster.String())
	default:
		s.passthrough(w, r, b, req, cluster.String())
	}
}

func isWatch(r *http.Request) bool {
	v := r.URL.Query().Get("watch")
	return v == "true" || v == "1"
}

// writeStatus writes a metav1.Status error, as an apiserver does.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Code:     int32(code),
		Reason:   reason,
		Message:  msg,
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}
