// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardentest

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// identityNamespace holds the ServiceAccounts of ServiceAccountConfig.
const identityNamespace = "mcr-system"

// ServiceAccountConfig returns a rest.Config for the garden with a token of the ServiceAccount
// mcr-system/name, bound cluster-wide to a ClusterRole with rules: an identity with exactly the
// permissions the caller documents (valid for two hours).
func (g *Garden) ServiceAccountConfig(ctx context.Context, name string, rules []rbacv1.PolicyRule) (*rest.Config, error) {
	c, err := client.New(g.Config(), client.Options{})
	if err != nil {
		return nil, err
	}
	roleName := identityNamespace + ":" + name
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: identityNamespace, Name: name}}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: identityNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: identityNamespace, Name: name}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: roleName}, Rules: rules},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: roleName},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName},
			Subjects:   subjects,
		},
	} {
		if err := createOrUpdate(ctx, c, obj, func() {}); err != nil {
			return nil, fmt.Errorf("gardentest: identity %s: %w", name, err)
		}
	}
	cs, err := kubernetes.NewForConfig(g.Config())
	if err != nil {
		return nil, err
	}
	tr, err := cs.CoreV1().ServiceAccounts(identityNamespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](2 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("gardentest: token of %s: %w", name, err)
	}
	cfg := rest.AnonymousClientConfig(g.Config())
	cfg.BearerToken = tr.Status.Token
	return cfg, nil
}
