// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	servers []*envtest.Member

	mu      sync.Mutex
	members map[string]*FleetMember
}

// NewFleet returns a Fleet over the given members of an envtest fleet; they must be running.
func NewFleet(servers ...*envtest.Member) *Fleet {
	return &Fleet{servers: slices.Clone(servers), members: map[string]*FleetMember{}}
}

// serverLoad counts live conformance members per apiserver across all Fleets of the process.
var serverLoad = struct {
	sync.Mutex
	n map[*envtest.Member]int
}{n: map[*envtest.Member]int{}}

// FleetMember is a member of a Fleet: an apiserver and the member's current credentials.
type FleetMember struct {
	name   string
	server *envtest.Member
	admin  client.Client

	mu         sync.Mutex
	generation int
	kubeconfig []byte
	config     *rest.Config
	accounts   []string // ServiceAccounts minted for this member, oldest first
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
	m := &FleetMember{name: name, server: server}
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
func (f *Fleet) pickLocked() *envtest.Member {
	used := map[*envtest.Member]bool{}
	for _, m := range f.members {
		used[m.server] = true
	}
	serverLoad.Lock()
	defer serverLoad.Unlock()
	var best *envtest.Member
	better := func(s *envtest.Member) bool {
		if best == nil {
			return true
		}
		if used[s] != used[best] {
			return !used[s]
		}
		return serverLoad.n[s] < serverLoad.n[best]
	}
	for _, s := range f.servers {
		if better(s) {
			best = s
		}
	}
	serverLoad.n[best]++
	return best
}

func (f *Fleet) forget(m *FleetMember) {
	f.mu.Lock()
	if f.members[m.name] == m {
		delete(f.members, m.name)
	}
	f.mu.Unlock()
	serverLoad.Lock()
	serverLoad.n[m.server]--
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
	accounts := slices.Clone(m.accounts)
	m.mu.Unlock()
	var errs []error
	for _, sa := range accounts {
		errs = append(errs, m.revoke(ctx, sa))
	}
	f.forget(m)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("conformance: removing fleet member %q: %w", name, err)
	}
	return nil
}

// Name returns the member's name.
func (m *FleetMember) Name() string { return m.name }

// Server returns the apiserver that serves the member.
func (m *FleetMember) Server() *envtest.Member { return m.server }

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
	return Member{ID: m.name, Name: name, Client: m.admin}
}

// Rotate mints new credentials for the member, which Kubeconfig and Config return from now on.
// The previous credentials keep working until revokeOld is called.
func (m *FleetMember) Rotate(ctx context.Context) (revokeOld func(context.Context) error, err error) {
	m.mu.Lock()
	if len(m.accounts) == 0 {
		m.mu.Unlock()
		return nil, fmt.Errorf("conformance: rotating the credentials of %q: it was removed", m.name)
	}
	old := m.accounts[len(m.accounts)-1]
	m.mu.Unlock()
	if _, err := m.mint(ctx); err != nil {
		return nil, fmt.Errorf("conformance: rotating the credentials of %q: %w", m.name, err)
	}
	return func(ctx context.Context) error { return m.revoke(ctx, old) }, nil
}

// mint creates a ServiceAccount bound to cluster-admin for the next generation of credentials
// and makes a token of it the member's current credentials.
func (m *FleetMember) mint(ctx context.Context) ([]byte, error) {
	m.mu.Lock()
	m.generation++
	sa := fmt.Sprintf("%s-%d", m.name, m.generation)
	m.mu.Unlock()

	if err := ensureCredentialsNamespace(ctx, m.server, m.admin); err != nil {
		return nil, err
	}
	account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: credentialsNamespace}}
	if err := m.admin.Create(ctx, account); err != nil {
		return nil, fmt.Errorf("creating service account %s: %w", sa, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: bindingName(sa)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: credentialsNamespace}},
	}
	if err := m.admin.Create(ctx, binding); err != nil {
		return nil, fmt.Errorf("binding service account %s: %w", sa, err)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if err := m.admin.SubResource("token").Create(ctx, account, tr); err != nil {
		return nil, fmt.Errorf("requesting a token for %s: %w", sa, err)
	}
	serverCfg := m.server.Config()
	kc := clientcmdapi.NewConfig()
	kc.Clusters[m.name] = &clientcmdapi.Cluster{Server: serverCfg.Host, CertificateAuthorityData: serverCfg.CAData}
	kc.AuthInfos[m.name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts[m.name] = &clientcmdapi.Context{Cluster: m.name, AuthInfo: m.name}
	kc.CurrentContext = m.name
	kubeconfig, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("encoding the kubeconfig: %w", err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("parsing the kubeconfig: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.kubeconfig, m.config = kubeconfig, cfg
	m.accounts = append(m.accounts, sa)
	return kubeconfig, nil
}

func bindingName(sa string) string { return credentialsNamespace + ":" + sa }

// revoke deletes a ServiceAccount of the member and its binding, which invalidates its tokens.
func (m *FleetMember) revoke(ctx context.Context, sa string) error {
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: credentialsNamespace}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: bindingName(sa)}},
	}
	var errs []error
	for _, o := range objs {
		if err := m.admin.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %T %s: %w", o, o.GetName(), err))
		}
	}
	m.mu.Lock()
	m.accounts = slices.DeleteFunc(m.accounts, func(a string) bool { return a == sa })
	m.mu.Unlock()
	return errors.Join(errs...)
}

// credentialNamespaces remembers the apiservers on which the credentials namespace exists.
var credentialNamespaces sync.Map // *envtest.Member → struct{}

func ensureCredentialsNamespace(ctx context.Context, server *envtest.Member, admin client.Client) error {
	if _, ok := credentialNamespaces.Load(server); ok {
		return nil
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: credentialsNamespace}}
	if err := admin.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", credentialsNamespace, err)
	}
	credentialNamespaces.Store(server, struct{}{})
	return nil
}

// adminClients caches one admin client per apiserver.
var adminClients = struct {
	sync.Mutex
	c map[*envtest.Member]client.Client
}{c: map[*envtest.Member]client.Client{}}

func adminClient(server *envtest.Member) (client.Client, error) {
	adminClients.Lock()
	defer adminClients.Unlock()
	if c, ok := adminClients.c[server]; ok {
		return c, nil
	}
	c, err := client.New(server.Config(), client.Options{})
	if err != nil {
		return nil, fmt.Errorf("creating an admin client for %q: %w", server.Name(), err)
	}
	adminClients.c[server] = c
	return c, nil
}
