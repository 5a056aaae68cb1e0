// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
)

// credentialsNamespace holds the ServiceAccounts whose tokens are the members' credentials.
const credentialsNamespace = "mcr-conformance"

// Fleet gives conformance members real clusters: each member is served by one of the
// kube-apiservers of an envtest fleet (mcr.dev/core/envtest) and gets credentials of its own,
// a ServiceAccount token, so that they can be rotated and revoked like real ones.
//
// Members are cheap: a Fleet hands the same few apiservers to many members over time. Members
// that exist at the same time get different apiservers while there are enough, so that
// isolation between clusters is real; beyond that they share the least busy one. Give a Fleet
// at least two apiservers; three let every test run on distinct ones except the Scale test.
//
// A Fleet is safe for concurrent use. Several Fleets may share apiservers (for example one
// Fleet per harness over one envtest fleet per test binary).
type Fleet struct {
	servers []*fleetServer
	// namespace holds the members' ServiceAccounts and the suite's objects: credentialsNamespace
	// on envtest apiservers, a namespace of this Fleet's own on existing clusters.
	namespace string
	// existing is set for a Fleet of existing clusters (NewFleetFromKubeconfigs), whose
	// objects carry labels and are removed by Close.
	existing *existingClusters

	mu      sync.Mutex
	members map[string]*FleetMember
}

// fleetServer is one apiserver of a Fleet: an envtest member, or an existing cluster.
type fleetServer struct {
	name string
	// envtest is the envtest member serving it; nil for an existing cluster.
	envtest *envtest.Member
	// config has the admin credentials the Fleet uses to mint members' credentials.
	config *rest.Config
	// key identifies the apiserver and those credentials across Fleets.
	key string
}

// NewFleet returns a Fleet over the given members of an envtest fleet; they must be running.
func NewFleet(servers ...*envtest.Member) *Fleet {
	f := &Fleet{namespace: credentialsNamespace, members: map[string]*FleetMember{}}
	for _, s := range servers {
		cfg := s.Config()
		f.servers = append(f.servers, &fleetServer{name: s.Name(), envtest: s, config: cfg, key: "envtest " + cfg.Host})
	}
	return f
}

// serverLoad counts live conformance members per apiserver (by URL) across all Fleets of the
// process.
var serverLoad = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

// FleetMember is a member of a Fleet: an apiserver and the member's current credentials.
type FleetMember struct {
	name   string
	fleet  *Fleet
	server *fleetServer
	admin  client.Client

	mu         sync.Mutex
	generation int
	kubeconfig []byte
	config     *rest.Config
	// account is the member's ServiceAccount, the one identity of all its credentials; "" once
	// the member is removed. tokens are its live tokens, oldest first.
	account string
	tokens  []mintedToken
	// host is the server address in the member's kubeconfig: the apiserver's own unless
	// MoveServer gave it another one.
	host string
}

// mintedToken is a token of a member and the Secret it is bound to: deleting the Secret revokes
// that token alone.
type mintedToken struct {
	secret string
	token  string
}

// Add assigns an apiserver to a new member and mints its first credentials.
func (f *Fleet) Add(ctx context.Context, name string) (*FleetMember, error) {
	if len(f.servers) == 0 {
		return nil, errors.New("conformance: the Fleet has no apiservers")
	}
	f.mu.Lock()
	if _, exists := f.members[name]; exists {
		f.mu.Unlock()
		return nil, fmt.Errorf("conformance: fleet member %q already exists", name)
	}
	server := f.pickLocked()
	m := &FleetMember{name: name, fleet: f, server: server}
	f.members[name] = m
	f.mu.Unlock()

	admin, err := adminClient(server)
	if err == nil {
		m.admin = admin
		_, err = m.mint(ctx)
	}
	if err != nil {
		f.forget(m)
		return nil, fmt.Errorf("conformance: adding fleet member %q: %w", name, err)
	}
	return m, nil
}

// pickLocked chooses the apiserver for a new member: preferably one that serves no other live
// member of this Fleet, and among those the least busy across the process.
func (f *Fleet) pickLocked() *fleetServer {
	used := map[*fleetServer]bool{}
	for _, m := range f.members {
		used[m.server] = true
	}
	serverLoad.Lock()
	defer serverLoad.Unlock()
	var best *fleetServer
	better := func(s *fleetServer) bool {
		if best == nil {
			return true
		}
		if used[s] != used[best] {
			return !used[s]
		}
		return serverLoad.n[s.config.Host] < serverLoad.n[best.config.Host]
	}
	for _, s := range f.servers {
		if better(s) {
			best = s
		}
	}
	serverLoad.n[best.config.Host]++
	return best
}

func (f *Fleet) forget(m *FleetMember) {
	f.mu.Lock()
	if f.members[m.name] == m {
		delete(f.members, m.name)
	}
	f.mu.Unlock()
	serverLoad.Lock()
	serverLoad.n[m.server.config.Host]--
	serverLoad.Unlock()
}

// Get returns the live member of that name, or nil.
func (f *Fleet) Get(name string) *FleetMember {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.members[name]
}

// Remove revokes every credential of the member and frees its apiserver. Removing an unknown
// name does nothing.
func (f *Fleet) Remove(ctx context.Context, name string) error {
	m := f.Get(name)
	if m == nil {
		return nil
	}
	m.mu.Lock()
	tokens, account := slices.Clone(m.tokens), m.account
	m.account = ""
	m.mu.Unlock()
	var errs []error
	for _, tok := range tokens {
		errs = append(errs, m.revokeToken(ctx, tok, false))
	}
	if account != "" {
		errs = append(errs, m.deleteAccount(ctx, account))
	}
	f.forget(m)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("conformance: removing fleet member %q: %w", name, err)
	}
	return nil
}

// Name returns the member's name.
func (m *FleetMember) Name() string { return m.name }

// Server returns the envtest apiserver that serves the member; nil in a Fleet of existing
// clusters (NewFleetFromKubeconfigs), where ServerName names the cluster.
func (m *FleetMember) Server() *envtest.Member { return m.server.envtest }

// ServerName returns the name of the apiserver or cluster that serves the member.
func (m *FleetMember) ServerName() string { return m.server.name }

// Client returns an admin client of the member's apiserver: direct access that bypasses any
// provider.
func (m *FleetMember) Client() client.Client { return m.admin }

// Kubeconfig returns a kubeconfig with the member's current credentials.
func (m *FleetMember) Kubeconfig() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.kubeconfig
}

// Config returns a rest.Config with the member's current credentials.
func (m *FleetMember) Config() *rest.Config {
	m.mu.Lock()
	defer m.mu.Unlock()
	return rest.CopyConfig(m.config)
}

// Member returns the conformance Member for this fleet member, engaged under name.
func (m *FleetMember) Member(name multicluster.ClusterName) Member {
	mem := Member{ID: m.name, Name: name, Client: m.admin}
	if m.fleet.existing != nil {
		// On an existing cluster the suite writes only into the Fleet's own namespace.
		mem.Namespace = m.fleet.namespace
	}
	return mem
}

// Rotate mints new credentials for the member, which Kubeconfig and Config return from now on:
// a new token of the same ServiceAccount, so that only the credentials change, not the
// identity. The previous token keeps working until revokeOld is called, which returns once the
// member's apiserver refuses it.
func (m *FleetMember) Rotate(ctx context.Context) (revokeOld func(context.Context) error, err error) {
	m.mu.Lock()
	if m.account == "" {
		m.mu.Unlock()
		return nil, fmt.Errorf("conformance: rotating the credentials of %q: it was removed", m.name)
	}
	old := m.tokens[len(m.tokens)-1]
	m.mu.Unlock()
	if _, err := m.mint(ctx); err != nil {
		return nil, fmt.Errorf("conformance: rotating the credentials of %q: %w", m.name, err)
	}
	return func(ctx context.Context) error { return m.revokeToken(ctx, old, true) }, nil
}

// mint makes a new token of the member's ServiceAccount, bound to cluster-admin, its current
// credentials; the first call creates the ServiceAccount. Each token is bound to a Secret of
// its own, so that deleting the Secret revokes that token and no other.
func (m *FleetMember) mint(ctx context.Context) ([]byte, error) {
	m.mu.Lock()
	m.generation++
	sa, first := m.account, m.account == ""
	if first {
		sa = m.name
	}
	secretName := fmt.Sprintf("%s-token-%d", m.name, m.generation)
	m.mu.Unlock()

	ns := m.fleet.namespace
	account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns, Labels: m.fleet.labels()}}
	if first {
		if err := ensureNamespace(ctx, m.server.config.Host, ns, m.admin, m.fleet.labels()); err != nil {
			return nil, err
		}
		if err := m.admin.Create(ctx, account); err != nil {
			return nil, fmt.Errorf("creating service account %s: %w", sa, err)
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: m.fleet.bindingName(sa), Labels: m.fleet.labels()},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}},
		}
		if err := m.admin.Create(ctx, binding); err != nil {
			return nil, fmt.Errorf("binding service account %s: %w", sa, err)
		}
		m.mu.Lock()
		m.account = sa
		m.mu.Unlock()
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: ns, Labels: m.fleet.labels()}}
	if err := m.admin.Create(ctx, secret); err != nil {
		return nil, fmt.Errorf("creating the Secret the token of %s is bound to: %w", sa, err)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To[int64](3600),
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: secret.Name, UID: secret.UID},
	}}
	if err := m.admin.SubResource("token").Create(ctx, account, tr); err != nil {
		return nil, fmt.Errorf("requesting a token for %s: %w", sa, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.setKubeconfigLocked(m.host, tr.Status.Token); err != nil {
		return nil, err
	}
	m.tokens = append(m.tokens, mintedToken{secret: secret.Name, token: tr.Status.Token})
	return m.kubeconfig, nil
}

// setKubeconfigLocked makes a kubeconfig for the member's apiserver at host ("" for its own
// address) with token the member's current credentials.
func (m *FleetMember) setKubeconfigLocked(host, token string) error {
	serverCfg := m.server.config
	server := serverCfg.Host
	if host != "" {
		server = host
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[m.name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: serverCfg.CAData,
		InsecureSkipTLSVerify: serverCfg.Insecure, TLSServerName: serverCfg.ServerName, ProxyURL: proxyURL(serverCfg)}
	kc.AuthInfos[m.name] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts[m.name] = &clientcmdapi.Context{Cluster: m.name, AuthInfo: m.name}
	kc.CurrentContext = m.name
	kubeconfig, err := clientcmd.Write(*kc)
	if err != nil {
		return fmt.Errorf("encoding the kubeconfig: %w", err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return fmt.Errorf("parsing the kubeconfig: %w", err)
	}
	m.kubeconfig, m.config, m.host = kubeconfig, cfg, host
	return nil
}

// MoveServer gives the member's kubeconfig another address of the same apiserver, with the
// same credentials: https://localhost:<port> for https://127.0.0.1:<port> and back. To a
// provider the member's server changed, so it must engage a new cluster even where it
// refreshes credentials in place. It fails for an apiserver reached by any other address.
func (m *FleetMember) MoveServer() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.tokens) == 0 {
		return fmt.Errorf("conformance: moving the server of %q: it was removed", m.name)
	}
	u, err := url.Parse(m.config.Host)
	if err != nil {
		return fmt.Errorf("conformance: moving the server of %q: %w", m.name, err)
	}
	switch u.Hostname() {
	case "127.0.0.1":
		u.Host = net.JoinHostPort("localhost", u.Port())
	case "localhost":
		u.Host = net.JoinHostPort("127.0.0.1", u.Port())
	default:
		return fmt.Errorf("conformance: moving the server of %q: only an apiserver at 127.0.0.1 or localhost has a second address, not %s", m.name, u.Hostname())
	}
	return m.setKubeconfigLocked(u.String(), m.tokens[len(m.tokens)-1].token)
}

func (f *Fleet) bindingName(sa string) string { return f.namespace + ":" + sa }

// labels are the labels of everything the Fleet creates: none on envtest apiservers, the
// suite's and the run's on existing clusters, so that a later run finds what this one left.
func (f *Fleet) labels() map[string]string {
	if f.existing == nil {
		return nil
	}
	return map[string]string{managedByLabel: managedByValue, runLabel: f.existing.run}
}

// revokeToken deletes the Secret tok is bound to, which invalidates the token. With wait, it
// returns once the apiserver refuses the token: it learns of the deletion through an informer,
// and a test of what happens after a revocation must not start before it.
func (m *FleetMember) revokeToken(ctx context.Context, tok mintedToken, wait bool) error {
	err := m.admin.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: tok.secret, Namespace: m.fleet.namespace}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Secret %s: %w", tok.secret, err)
	}
	m.mu.Lock()
	m.tokens = slices.DeleteFunc(m.tokens, func(t mintedToken) bool { return t.secret == tok.secret })
	cfg := rest.CopyConfig(m.config)
	m.mu.Unlock()
	if !wait {
		return nil
	}
	cfg.BearerToken, cfg.BearerTokenFile = tok.token, ""
	old, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("a client with the revoked token: %w", err)
	}
	for {
		_, err := old.CoreV1().ConfigMaps(m.fleet.namespace).List(ctx, metav1.ListOptions{Limit: 1})
		if apierrors.IsUnauthorized(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the token bound to Secret %s still works after the Secret was deleted (last answer: %v)", tok.secret, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// deleteAccount deletes the member's ServiceAccount and its binding, which invalidates every
// token of it.
func (m *FleetMember) deleteAccount(ctx context.Context, sa string) error {
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: m.fleet.namespace}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: m.fleet.bindingName(sa)}},
	}
	var errs []error
	for _, o := range objs {
		if err := m.admin.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %T %s: %w", o, o.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

// createdNamespaces remembers the namespaces known to exist, by apiserver URL and name.
var createdNamespaces sync.Map // [2]string{host, namespace} → struct{}

func ensureNamespace(ctx context.Context, host, name string, admin client.Client, labels map[string]string) error {
	key := [2]string{host, name}
	if _, ok := createdNamespaces.Load(key); ok {
		return nil
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := admin.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	createdNamespaces.Store(key, struct{}{})
	return nil
}

// adminClients caches one admin client per fleetServer key.
var adminClients = struct {
	sync.Mutex
	c map[string]client.Client
}{c: map[string]client.Client{}}

func adminClient(s *fleetServer) (client.Client, error) {
	adminClients.Lock()
	defer adminClients.Unlock()
	if c, ok := adminClients.c[s.key]; ok {
		return c, nil
	}
	c, err := client.New(s.config, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("creating an admin client for %q: %w", s.name, err)
	}
	adminClients.c[s.key] = c
	return c, nil
}

// proxyURL returns the proxy URL a kubeconfig set for the config, "" for none.
func proxyURL(config *rest.Config) string {
	if config.Proxy == nil {
		return ""
	}
	u, err := config.Proxy(&http.Request{URL: &url.URL{Scheme: "https", Host: "example.com"}})
	if err != nil || u == nil {
		return ""
	}
	return u.String()
}
