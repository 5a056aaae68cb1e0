// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"context"
	"fmt"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ServiceAccountOptions describe the limited identity created by
// Member.ServiceAccountKubeconfig. The zero value is valid.
type ServiceAccountOptions struct {
	// Namespace holds the ServiceAccount, and the Role and RoleBinding for Rules. It is created
	// if missing. Default: "mcr-system".
	Namespace string

	// Name names the ServiceAccount and every RBAC object created for it (the ClusterRole and
	// ClusterRoleBinding are called "<Namespace>:<Name>"). Default: "mcr-client".
	Name string

	// ClusterRules are granted cluster-wide through a ClusterRole and ClusterRoleBinding.
	// Default (nil): get, list and watch on namespaces and configmaps, i.e. read-only access
	// to two kinds; a non-nil empty slice grants nothing cluster-wide.
	ClusterRules []rbacv1.PolicyRule

	// Rules are granted within Namespace through a Role and RoleBinding. Default: none.
	Rules []rbacv1.PolicyRule

	// TokenExpiration is the lifetime requested for the token through the TokenRequest API.
	// kube-apiserver refuses less than 10 minutes. Default: 1 hour.
	TokenExpiration time.Duration
}

const (
	defaultServiceAccountNamespace = "mcr-system"
	defaultServiceAccountName      = "mcr-client"
	defaultTokenExpiration         = time.Hour
)

// DefaultServiceAccountClusterRules returns the rules ServiceAccountOptions.ClusterRules
// defaults to: read-only access to namespaces and configmaps.
func DefaultServiceAccountClusterRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{
		APIGroups: []string{""},
		Resources: []string{"namespaces", "configmaps"},
		Verbs:     []string{"get", "list", "watch"},
	}}
}

func (o *ServiceAccountOptions) setDefaults() {
	if o.Namespace == "" {
		o.Namespace = defaultServiceAccountNamespace
	}
	if o.Name == "" {
		o.Name = defaultServiceAccountName
	}
	if o.ClusterRules == nil {
		o.ClusterRules = DefaultServiceAccountClusterRules()
	}
	if o.TokenExpiration <= 0 {
		o.TokenExpiration = defaultTokenExpiration
	}
}

// ServiceAccountKubeconfig creates (or updates) a ServiceAccount with the RBAC rules of opts,
// mints a token for it through the TokenRequest API and returns a kubeconfig that uses the
// token. This is the kind of credential providers hand out in real fleets: use it to test
// that a component works with, and only with, the permissions it documents.
func (m *Member) ServiceAccountKubeconfig(ctx context.Context, opts ServiceAccountOptions) ([]byte, error) {
	opts.setDefaults()
	// A transport of its own, closed on return, so that the admin connections this call opens
	// do not linger in client-go's shared transport cache.
	tlsConfig, err := m.creds.adminTLSConfig()
	if err != nil {
		return nil, fmt.Errorf("envtest: member %q: %w", m.name, err)
	}
	transport := &http.Transport{TLSClientConfig: tlsConfig, ForceAttemptHTTP2: true}
	defer transport.CloseIdleConnections()
	cs, err := kubernetes.NewForConfigAndClient(m.Config(), &http.Client{Transport: transport})
	if err != nil {
		return nil, fmt.Errorf("envtest: member %q: %w", m.name, err)
	}
	wrap := func(what string, err error) error {
		return fmt.Errorf("envtest: member %q: service account %s/%s: %s: %w", m.name, opts.Namespace, opts.Name, what, err)
	}

	if err := ensure(ctx, cs.CoreV1().Namespaces(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: opts.Namespace},
	}, nil); err != nil {
		return nil, wrap("creating namespace", err)
	}
	if err := ensure(ctx, cs.CoreV1().ServiceAccounts(opts.Namespace), &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: opts.Name, Namespace: opts.Namespace},
	}, nil); err != nil {
		return nil, wrap("creating service account", err)
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: opts.Name, Namespace: opts.Namespace}}

	clusterName := opts.Namespace + ":" + opts.Name
	if err := ensure(ctx, cs.RbacV1().ClusterRoles(), &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: clusterName},
		Rules:      opts.ClusterRules,
	}, func(existing, desired *rbacv1.ClusterRole) { existing.Rules = desired.Rules }); err != nil {
		return nil, wrap("writing cluster role", err)
	}
	if err := ensure(ctx, cs.RbacV1().ClusterRoleBindings(), &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: clusterName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterName},
		Subjects:   subject,
	}, nil); err != nil {
		return nil, wrap("writing cluster role binding", err)
	}
	if err := ensure(ctx, cs.RbacV1().Roles(opts.Namespace), &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: opts.Name, Namespace: opts.Namespace},
		Rules:      opts.Rules,
	}, func(existing, desired *rbacv1.Role) { existing.Rules = desired.Rules }); err != nil {
		return nil, wrap("writing role", err)
	}
	if err := ensure(ctx, cs.RbacV1().RoleBindings(opts.Namespace), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: opts.Name, Namespace: opts.Namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: opts.Name},
		Subjects:   subject,
	}, nil); err != nil {
		return nil, wrap("writing role binding", err)
	}

	seconds := int64(opts.TokenExpiration / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(opts.Namespace).CreateToken(ctx, opts.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, wrap("requesting token", err)
	}
	data, err := m.kubeconfig(&clientcmdapi.AuthInfo{Token: tr.Status.Token})
	if err != nil {
		return nil, wrap("encoding kubeconfig", err)
	}
	return data, nil
}

// objectClient is the part of a typed client-go interface that ensure needs.
type objectClient[T any] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// ensure creates desired, or, when it exists and update is not nil, copies the desired state
// into the existing object with update and writes it back.
func ensure[T interface{ GetName() string }](ctx context.Context, c objectClient[T], desired T, update func(existing, desired T)) error {
	_, err := c.Create(ctx, desired, metav1.CreateOptions{})
	if err == nil || !apierrors.IsAlreadyExists(err) {
		return err
	}
	if update == nil {
		return nil
	}
	existing, err := c.Get(ctx, desired.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	update(existing, desired)
	_, err = c.Update(ctx, existing, metav1.UpdateOptions{})
	return err
}
