// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package frontproxy

import (
	"context"
	"errors"
	"fmt"
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

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
)

// The identity ServiceAccountMinter gives out on each backing cluster.
const (
	adminNamespace      = "kube-system"
	adminServiceAccount = "mcr-shoot-admin"
	// minTokenSeconds is the shortest lifetime kube-apiserver's TokenRequest API accepts.
	minTokenSeconds = 600
)

// ServiceAccountMinter issues admin kubeconfigs for the clusters behind Shoots: the Shoot's
// first kube-apiserver advertised address names the backing cluster, and each kubeconfig holds
// a new token of a cluster-admin ServiceAccount there, minted with the TokenRequest API and
// bound to a Secret of its own. When the kubeconfig expires, the Secret is deleted, which
// revokes the token: expired credentials really stop working, even when they were issued for
// less than the ten minutes TokenRequest allows.
type ServiceAccountMinter struct {
	backends map[string]backend
	ensured  sync.Map // URL -> struct{}: ServiceAccount and binding exist

	mu     sync.Mutex
	timers []*time.Timer
	closed bool
	revoke sync.WaitGroup
}

// NewServiceAccountMinter returns a minter for the given backing clusters: admin configs keyed
// by the URL Shoots advertise for them (status.advertisedAddresses[].url).
func NewServiceAccountMinter(backends map[string]*rest.Config) (*ServiceAccountMinter, error) {
	m := &ServiceAccountMinter{backends: map[string]backend{}}
	for u, cfg := range backends {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("frontproxy: backend %s: %w", u, err)
		}
		m.backends[u] = backend{cs: cs, ca: cfg.CAData}
	}
	return m, nil
}

// backend is one backing cluster: an admin client and the CA that signs its serving
// certificate.
type backend struct {
	cs kubernetes.Interface
	ca []byte
}

// Mint is a Minter.
func (m *ServiceAccountMinter) Mint(ctx context.Context, shoot *gardencorev1beta1.Shoot, validity time.Duration) ([]byte, time.Time, error) {
	addrs := APIServerAddresses(shoot)
	if len(addrs) == 0 {
		return nil, time.Time{}, errors.New("the shoot has no kube-apiserver address")
	}
	server := addrs[0].URL
	b, ok := m.backends[server]
	cs := b.cs
	if !ok {
		return nil, time.Time{}, fmt.Errorf("no backing cluster for the address %s", server)
	}
	if err := m.ensureAdmin(ctx, server, cs); err != nil {
		return nil, time.Time{}, err
	}
	binding, err := cs.CoreV1().Secrets(adminNamespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "mcr-admin-kubeconfig-", Labels: map[string]string{"shoot": shoot.Name}},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("creating the token's binding Secret: %w", err)
	}
	seconds := max(int64(validity/time.Second), minTokenSeconds)
	issued := time.Now()
	tr, err := cs.CoreV1().ServiceAccounts(adminNamespace).CreateToken(ctx, adminServiceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: &seconds,
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: binding.Name, UID: binding.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("requesting a token: %w", err)
	}
	expires := issued.Add(validity)
	m.schedule(time.Until(expires), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = cs.CoreV1().Secrets(adminNamespace).Delete(ctx, binding.Name, metav1.DeleteOptions{})
	})

	// Named like Gardener's: <namespace>--<shoot>-<address name>.
	name := fmt.Sprintf("%s--%s-%s", shoot.Namespace, shoot.Name, addrs[0].Name)
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: b.ca}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, time.Time{}, err
	}
	return data, expires, nil
}

// ensureAdmin creates the ServiceAccount and its cluster-admin binding once per backend.
func (m *ServiceAccountMinter) ensureAdmin(ctx context.Context, server string, cs kubernetes.Interface) error {
	if _, done := m.ensured.Load(server); done {
		return nil
	}
	_, err := cs.CoreV1().ServiceAccounts(adminNamespace).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: adminServiceAccount},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the admin ServiceAccount: %w", err)
	}
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: adminServiceAccount},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: adminServiceAccount, Namespace: adminNamespace}},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("binding the admin ServiceAccount: %w", err)
	}
	m.ensured.Store(server, struct{}{})
	return nil
}

// schedule runs fn after d unless the minter is closed first.
func (m *ServiceAccountMinter) schedule(d time.Duration, fn func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.revoke.Add(1)
	t := time.AfterFunc(d, func() {
		defer m.revoke.Done()
		fn()
	})
	m.timers = append(m.timers, t)
}

// Close cancels pending revocations and waits for running ones.
func (m *ServiceAccountMinter) Close() {
	m.mu.Lock()
	m.closed = true
	timers := m.timers
	m.timers = nil
	m.mu.Unlock()
	for _, t := range timers {
		if t.Stop() {
			m.revoke.Done()
		}
	}
	m.revoke.Wait()
}
