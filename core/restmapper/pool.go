// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package restmapper

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// Options configure a Pool.
type Options struct {
	// NewMapper builds a REST mapper from a config and an HTTP client: the one an endpoint's
	// clusters share, and the own one of a cluster whose config cannot share (see
	// Pool.MapperProvider).
	//
	// Defaults to controller-runtime's apiutil.NewDynamicRESTMapper, the mapper cluster.New
	// uses when none is given.
	NewMapper func(*rest.Config, *http.Client) (meta.RESTMapper, error)

	// SeparateClientCertificates keeps clusters that authenticate with different client
	// certificates (or certificate files) apart even at one endpoint: a proxy that picks the
	// backend cluster from the client certificate serves each certificate the discovery of
	// another cluster at the same URL. Clusters that authenticate with tokens still share.
	//
	// Defaults to false: the endpoint alone decides (see Pool.MapperProvider). Default's Pool
	// sets it.
	SeparateClientCertificates bool
}

// DefaultCredentialAttempts is how many of an endpoint's clusters a discovery request is tried
// with when the server refuses the credentials (401 or 403).
const DefaultCredentialAttempts = 3

// Pool hands out REST mappers shared per apiserver endpoint. Its zero value is not usable;
// create one with NewPool. A Pool is safe for concurrent use and lives as long as the process
// or the manager that uses it; it holds no goroutine.
type Pool struct {
	newMapper     func(*rest.Config, *http.Client) (meta.RESTMapper, error)
	byCertificate bool

	mu        sync.Mutex
	endpoints map[string]*endpoint
}

// NewPool returns an empty Pool.
func NewPool(opts Options) *Pool {
	if opts.NewMapper == nil {
		opts.NewMapper = apiutil.NewDynamicRESTMapper
	}
	return &Pool{newMapper: opts.NewMapper, byCertificate: opts.SeparateClientCertificates, endpoints: map[string]*endpoint{}}
}

// defaultPool is Default's Pool, built on first use.
var defaultPool = sync.OnceValue(func() *Pool {
	return NewPool(Options{SeparateClientCertificates: true})
})

// Default returns the process's Pool, the one every member cluster that mcr builds uses unless
// told otherwise (clusters.Defaults.RESTMappers and OwnRESTMappers; a provider's
// ClusterOptions with Own). It keeps clusters that authenticate with different client
// certificates apart (Options.SeparateClientCertificates): pass a Pool of your own without
// it to share those too, where the endpoint is a plain kube-apiserver.
func Default() *Pool { return defaultPool() }

// Own is a cluster.Option that gives the cluster a REST mapper of its own, controller-runtime's
// default: pass it in a provider's ClusterOptions to keep that provider's members out of the
// shared mappers, for example behind a proxy that routes by the client's token.
func Own(o *cluster.Options) { o.MapperProvider = apiutil.NewDynamicRESTMapper }

// endpoint is one shared mapper and the clusters that use it. Its discovery requests go out with
// the credentials of one of those clusters (see credentialsOf).
type endpoint struct {
	key    string
	mapper meta.RESTMapper

	mu    sync.Mutex
	users []*user // oldest first
}

// user is one cluster's claim on an endpoint: its HTTP client, with its credentials.
type user struct {
	client *http.Client
}

// shared is the mapper a cluster gets. It holds its user's claim: when the cluster (and so
// this value) is garbage, the claim is released, and with the last claim the endpoint's mapper.
type shared struct {
	meta.RESTMapper
}

// ClusterOption returns a cluster.Option that sets the cluster's MapperProvider to
// p.MapperProvider.
func (p *Pool) ClusterOption() cluster.Option {
	return func(o *cluster.Options) { o.MapperProvider = p.MapperProvider }
}

// MapperProvider returns the REST mapper of cfg's endpoint, building it on first use. It has
// the signature of cluster.Options.MapperProvider.
//
// Two configs share an endpoint when they have the same server URL (scheme, host, port and
// path: kcp's /clusters/<name> paths are different endpoints), API path, TLS server name and
// certificate authority (file name or data), and, in a Pool with
// Options.SeparateClientCertificates, the same client certificate. A config that routes its
// requests in a way that cannot be compared, or trusts any server, gets a mapper of its own, as
// without a Pool: one with Insecure set, a Proxy, Dial, Transport or WrapTransport function, or no Host. The
// Transport of a member whose credentials the provider kit refreshes in place is the exception:
// it has an EndpointConfig() *rest.Config method, and the endpoint that returns is compared.
//
// The shared mapper discovers with the credentials of a cluster that still uses it, the most
// recent one first, and on a 401 or 403 tries up to DefaultCredentialAttempts of them, so that
// a cluster whose credentials were revoked does not break discovery for the others. It holds no
// credentials of its own. When no cluster uses an endpoint any more (each cluster's mapper is
// released when the cluster is garbage collected), the Pool forgets its mapper.
func (p *Pool) MapperProvider(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
	if httpClient == nil {
		return nil, errors.New("restmapper: the cluster's HTTP client is nil")
	}
	key, ok := p.key(cfg)
	if !ok {
		return p.newMapper(cfg, httpClient)
	}
	cfg = endpointOf(cfg)
	u := &user{client: httpClient}

	p.mu.Lock()
	defer p.mu.Unlock()
	ep := p.endpoints[key]
	if ep == nil {
		ep = &endpoint{key: key}
		// The mapper is built from a config without credentials: it authenticates through
		// credentialsOf, with those of a cluster that still uses the endpoint.
		mapper, err := p.newMapper(rest.AnonymousClientConfig(cfg), &http.Client{Transport: &credentialsOf{ep: ep}})
		if err != nil {
			return nil, fmt.Errorf("restmapper: building the shared mapper: %w", err)
		}
		ep.mapper = mapper
		p.endpoints[key] = ep
	}
	ep.mu.Lock()
	ep.users = append(ep.users, u)
	ep.mu.Unlock()
	s := &shared{RESTMapper: ep.mapper}
	runtime.AddCleanup(s, p.release, claim{ep: ep, user: u})
	return s, nil
}

// endpointTransport is a Transport that says which endpoint it reaches: the provider kit's for
// members whose credentials are refreshed in place.
type endpointTransport interface {
	EndpointConfig() *rest.Config
}

// claim is what is released when a cluster's mapper is garbage.
type claim struct {
	ep   *endpoint
	user *user
}

func (p *Pool) release(c claim) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c.ep.mu.Lock()
	for i, u := range c.ep.users {
		if u == c.user {
			c.ep.users = append(c.ep.users[:i], c.ep.users[i+1:]...)
			break
		}
	}
	empty := len(c.ep.users) == 0
	c.ep.mu.Unlock()
	if empty && p.endpoints[c.ep.key] == c.ep {
		delete(p.endpoints, c.ep.key)
	}
}

// Endpoints returns how many endpoints have a shared mapper: one per distinct endpoint among
// the clusters that use the Pool and are not yet garbage collected.
func (p *Pool) Endpoints() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.endpoints)
}

// Clusters returns how many clusters use the shared mapper of cfg's endpoint: zero when none
// does or cfg cannot share (see MapperProvider).
func (p *Pool) Clusters(cfg *rest.Config) int {
	key, ok := p.key(cfg)
	if !ok {
		return 0
	}
	p.mu.Lock()
	ep := p.endpoints[key]
	p.mu.Unlock()
	if ep == nil {
		return 0
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return len(ep.users)
}

// endpointOf is the config whose endpoint cfg reaches: the one its Transport names for a member
// whose credentials are refreshed in place (its Transport authenticates), else cfg.
func endpointOf(cfg *rest.Config) *rest.Config {
	if cfg != nil {
		if t, ok := cfg.Transport.(endpointTransport); ok {
			return t.EndpointConfig()
		}
	}
	return cfg
}

// key names the mapper cfg gets from p, or reports that cfg must not share one.
func (p *Pool) key(cfg *rest.Config) (string, bool) {
	cfg = endpointOf(cfg)
	key, ok := endpointKey(cfg)
	if ok && p.byCertificate {
		key += certificateKey(cfg)
	}
	return key, ok
}

// endpointKey names cfg's endpoint, or reports that cfg must not share one (see MapperProvider).
func endpointKey(cfg *rest.Config) (string, bool) {
	if cfg == nil || cfg.Host == "" || cfg.Insecure || cfg.Proxy != nil || cfg.Dial != nil ||
		cfg.Transport != nil || cfg.WrapTransport != nil {
		return "", false
	}
	host := cfg.Host
	if !strings.Contains(host, "://") {
		// client-go's rule for a host without a scheme: https unless told otherwise.
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	ca := sha256.Sum256(cfg.CAData)
	var b strings.Builder
	for _, part := range []string{
		strings.ToLower(u.Scheme), strings.ToLower(u.Host), strings.TrimSuffix(u.EscapedPath(), "/"),
		cfg.APIPath, cfg.ServerName, cfg.CAFile, hex.EncodeToString(ca[:]),
	} {
		// Length-prefixed, so that no field can make two different configs read the same.
		fmt.Fprintf(&b, "%d:%s;", len(part), part)
	}
	return b.String(), true
}

// certificateKey names the client certificate cfg authenticates with, if any, for a Pool that
// keeps certificates apart. The certificate is public; only its hash goes into the key anyway.
func certificateKey(cfg *rest.Config) string {
	if len(cfg.CertData) == 0 && cfg.CertFile == "" {
		return ""
	}
	sum := sha256.Sum256(cfg.CertData)
	return fmt.Sprintf("cert:%d:%s;%s", len(cfg.CertFile), cfg.CertFile, hex.EncodeToString(sum[:]))
}

// credentialsOf sends an endpoint mapper's discovery requests with the credentials of the
// clusters that use the endpoint, newest first.
type credentialsOf struct {
	ep *endpoint
}

// errNoCluster is what discovery gets between the last cluster's release and the mapper's.
var errNoCluster = errors.New("restmapper: no cluster uses this endpoint any more")

func (c *credentialsOf) RoundTrip(req *http.Request) (*http.Response, error) {
	c.ep.mu.Lock()
	n := min(len(c.ep.users), DefaultCredentialAttempts)
	clients := make([]*http.Client, 0, n)
	for i := len(c.ep.users) - 1; i >= 0 && len(clients) < n; i-- {
		clients = append(clients, c.ep.users[i].client)
	}
	c.ep.mu.Unlock()
	if len(clients) == 0 {
		return nil, errNoCluster
	}
	if req.Body != nil && req.Body != http.NoBody {
		// Discovery sends none; a body could not be sent twice.
		clients = clients[:1]
	}
	for i, hc := range clients {
		r := req.Clone(req.Context())
		rt := hc.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
		resp, err := rt.RoundTrip(r)
		last := i == len(clients)-1
		if err != nil || last || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
			return resp, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
	}
	return nil, errNoCluster // not reached: the last attempt returns
}
