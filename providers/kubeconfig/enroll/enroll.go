// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package enroll adds a cluster to a fleet served by the kubeconfig provider: it creates a
// least-privilege ServiceAccount on the member, mints a token for it with the TokenRequest API
// and stores a kubeconfig using that token as a labeled Secret on the host, where the provider
// picks it up. Running it again rotates the token: the Secret's kubeconfig changes and the
// provider re-engages the member with the new credentials.
//
// The command mcr.dev/providers/kubeconfig/cmd/kubeconfig-secret is a thin wrapper around
// Member.
package enroll

import (
	"context"
	"errors"
	"fmt"
	"maps"
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

	"mcr.dev/providers/kubeconfig"
)

const (
	// DefaultServiceAccountNamespace is the default of Options.ServiceAccountNamespace.
	DefaultServiceAccountNamespace = "mcr-system"
	// DefaultServiceAccountName is the default of Options.ServiceAccountName.
	DefaultServiceAccountName = "mcr-kubeconfig-provider"
	// DefaultTokenExpiration is the default of Options.TokenExpiration.
	DefaultTokenExpiration = 30 * 24 * time.Hour

	// ManagedByLabel marks every object enroll creates, on the member and on the host.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of ManagedByLabel.
	ManagedByValue = "mcr-kubeconfig-enroll"

	// ServiceAccountAnnotation on the Secret names the member's ServiceAccount, namespace/name.
	ServiceAccountAnnotation = "kubeconfig.mcr.dev/service-account"
	// TokenExpirationAnnotation on the Secret holds the token's expiry, RFC 3339. Enroll again
	// before then.
	TokenExpirationAnnotation = "kubeconfig.mcr.dev/token-expiration"
)

// DefaultClusterRules returns the default of Options.ClusterRules: read-only access to
// namespaces, enough to see that the credentials work. The provider itself needs nothing on a
// member (its connectivity check is allowed for every authenticated user); grant what your
// controllers need with ClusterRules or ClusterRoles.
func DefaultClusterRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{
		APIGroups: []string{""},
		Resources: []string{"namespaces"},
		Verbs:     []string{"get", "list", "watch"},
	}}
}

// Options describe the identity created on the member and the Secret written on the host. The
// zero value of every field except SecretName selects its default.
type Options struct {
	// SecretName names the Secret on the host, and so the cluster (the provider names clusters
	// after their Secret by default). Required.
	SecretName string

	// SecretNamespace is the host namespace of the Secret, the one the provider watches.
	//
	// Defaults to kubeconfig.DefaultNamespace ("mcr-system").
	SecretNamespace string

	// SecretLabel is the label that makes the provider pick the Secret up, with value "true".
	//
	// Defaults to kubeconfig.DefaultSecretLabel.
	SecretLabel string

	// SecretKey is the data key that holds the kubeconfig.
	//
	// Defaults to kubeconfig.DefaultSecretKey ("kubeconfig").
	SecretKey string

	// ServiceAccountNamespace is the member namespace of the ServiceAccount; it is created if
	// missing.
	//
	// Defaults to DefaultServiceAccountNamespace ("mcr-system").
	ServiceAccountNamespace string

	// ServiceAccountName names the ServiceAccount on the member. Its ClusterRole and
	// ClusterRoleBinding are named "<ServiceAccountNamespace>:<ServiceAccountName>".
	//
	// Defaults to DefaultServiceAccountName ("mcr-kubeconfig-provider").
	ServiceAccountName string

	// ClusterRules are granted to the ServiceAccount cluster-wide through its ClusterRole; they
	// replace the rules of an earlier enrollment. A non-nil empty slice grants nothing.
	//
	// Defaults to DefaultClusterRules() (read-only namespaces).
	ClusterRules []rbacv1.PolicyRule

	// ClusterRoles are existing ClusterRoles (e.g. "view") bound to the ServiceAccount as well,
	// each through a ClusterRoleBinding "<ServiceAccountNamespace>:<ServiceAccountName>:<role>".
	//
	// Defaults to none.
	ClusterRoles []string

	// TokenExpiration is the lifetime requested for the token. The member may grant less (see
	// kube-apiserver's --service-account-max-token-expiration); Result.Expiration says what it
	// granted.
	//
	// Defaults to DefaultTokenExpiration (30 days).
	TokenExpiration time.Duration

	// Server is the member's API server URL as the provider reaches it.
	//
	// Defaults to the Host of the member config.
	Server string

	// TLSServerName overrides the server name checked against the member's certificate.
	//
	// Defaults to none (the host name of Server).
	TLSServerName string
}

func (o Options) withDefaults() Options {
	if o.SecretNamespace == "" {
		o.SecretNamespace = kubeconfig.DefaultNamespace
	}
	if o.SecretLabel == "" {
		o.SecretLabel = kubeconfig.DefaultSecretLabel
	}
	if o.SecretKey == "" {
		o.SecretKey = kubeconfig.DefaultSecretKey
	}
	if o.ServiceAccountNamespace == "" {
		o.ServiceAccountNamespace = DefaultServiceAccountNamespace
	}
	if o.ServiceAccountName == "" {
		o.ServiceAccountName = DefaultServiceAccountName
	}
	if o.ClusterRules == nil {
		o.ClusterRules = DefaultClusterRules()
	}
	if o.TokenExpiration <= 0 {
		o.TokenExpiration = DefaultTokenExpiration
	}
	return o
}

// Result is what Member produced.
type Result struct {
	// Secret is the Secret as built for the host (and, unless only Kubeconfig was called,
	// as written there).
	Secret *corev1.Secret
	// Expiration is when the token stops working.
	Expiration time.Time
}

// Member enrolls the member that memberConfig reaches (with enough rights to create a
// ServiceAccount and RBAC) into the fleet of the host that hostConfig reaches (with the right to
// write Secrets in Options.SecretNamespace): it runs Kubeconfig and writes the Secret.
func Member(ctx context.Context, memberConfig, hostConfig *rest.Config, opts Options) (*Result, error) {
	res, err := Kubeconfig(ctx, memberConfig, opts)
	if err != nil {
		return nil, err
	}
	host, err := kubernetes.NewForConfig(hostConfig)
	if err != nil {
		return nil, fmt.Errorf("enroll: host client: %w", err)
	}
	written, err := writeSecret(ctx, host, res.Secret)
	if err != nil {
		return nil, fmt.Errorf("enroll: writing Secret %s/%s on the host: %w", res.Secret.Namespace, res.Secret.Name, err)
	}
	res.Secret = written
	return res, nil
}

// Kubeconfig creates or updates the member's ServiceAccount and RBAC, mints a token and returns
// the host Secret holding a kubeconfig with it, without writing the Secret anywhere.
func Kubeconfig(ctx context.Context, memberConfig *rest.Config, opts Options) (*Result, error) {
	o := opts.withDefaults()
	if o.SecretName == "" {
		return nil, errors.New("enroll: Options.SecretName is required")
	}
	member, err := kubernetes.NewForConfig(memberConfig)
	if err != nil {
		return nil, fmt.Errorf("enroll: member client: %w", err)
	}
	// The CA goes into the kubeconfig inline: the provider refuses file references by default.
	caConfig := rest.CopyConfig(memberConfig)
	if err := rest.LoadTLSFiles(caConfig); err != nil {
		return nil, fmt.Errorf("enroll: reading the member's CA: %w", err)
	}
	if err := grant(ctx, member, o); err != nil {
		return nil, err
	}

	seconds := int64(o.TokenExpiration / time.Second)
	tr, err := member.CoreV1().ServiceAccounts(o.ServiceAccountNamespace).CreateToken(ctx, o.ServiceAccountName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("enroll: requesting a token for %s/%s: %w", o.ServiceAccountNamespace, o.ServiceAccountName, err)
	}

	server := o.Server
	if server == "" {
		server = memberConfig.Host
	}
	kc := clientcmdapi.NewConfig()
	name := o.SecretName
	kc.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: caConfig.CAData,
		TLSServerName:            o.TLSServerName,
	}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("enroll: encoding the kubeconfig: %w", err)
	}

	expiration := tr.Status.ExpirationTimestamp.Time
	return &Result{
		Expiration: expiration,
		Secret: &corev1.Secret{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{
				Name:      o.SecretName,
				Namespace: o.SecretNamespace,
				Labels:    map[string]string{o.SecretLabel: "true", ManagedByLabel: ManagedByValue},
				Annotations: map[string]string{
					ServiceAccountAnnotation:  o.ServiceAccountNamespace + "/" + o.ServiceAccountName,
					TokenExpirationAnnotation: expiration.UTC().Format(time.RFC3339),
				},
			},
			Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{o.SecretKey: data},
		},
	}, nil
}

// grant creates or updates the ServiceAccount, its ClusterRole and the bindings on the member.
func grant(ctx context.Context, member kubernetes.Interface, o Options) error {
	labels := map[string]string{ManagedByLabel: ManagedByValue}
	wrap := func(what string, err error) error {
		return fmt.Errorf("enroll: %s for %s/%s on the member: %w", what, o.ServiceAccountNamespace, o.ServiceAccountName, err)
	}
	if err := ignoreExists(member.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: o.ServiceAccountNamespace, Labels: labels},
	}, metav1.CreateOptions{})); err != nil {
		return wrap("creating namespace", err)
	}
	if err := ignoreExists(member.CoreV1().ServiceAccounts(o.ServiceAccountNamespace).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: o.ServiceAccountName, Namespace: o.ServiceAccountNamespace, Labels: labels},
	}, metav1.CreateOptions{})); err != nil {
		return wrap("creating service account", err)
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: o.ServiceAccountName, Namespace: o.ServiceAccountNamespace}}
	roleName := o.ServiceAccountNamespace + ":" + o.ServiceAccountName

	roles := member.RbacV1().ClusterRoles()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: roleName, Labels: labels}, Rules: o.ClusterRules}
	if _, err := roles.Create(ctx, role, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		existing, err := roles.Get(ctx, roleName, metav1.GetOptions{})
		if err != nil {
			return wrap("reading cluster role", err)
		}
		existing.Rules = o.ClusterRules
		if _, err := roles.Update(ctx, existing, metav1.UpdateOptions{}); err != nil {
			return wrap("updating cluster role", err)
		}
	} else if err != nil {
		return wrap("creating cluster role", err)
	}

	bind := func(bindingName, clusterRole string) error {
		return ignoreExists(member.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: bindingName, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
			Subjects:   subjects,
		}, metav1.CreateOptions{}))
	}
	if err := bind(roleName, roleName); err != nil {
		return wrap("binding cluster role", err)
	}
	for _, extra := range o.ClusterRoles {
		if err := bind(roleName+":"+extra, extra); err != nil {
			return wrap("binding cluster role "+extra, err)
		}
	}
	return nil
}

func ignoreExists[T any](_ T, err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// writeSecret creates the Secret or updates its labels, annotations and data.
func writeSecret(ctx context.Context, host kubernetes.Interface, s *corev1.Secret) (*corev1.Secret, error) {
	secrets := host.CoreV1().Secrets(s.Namespace)
	out, err := secrets.Create(ctx, s, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return out, err
	}
	existing, err := secrets.Get(ctx, s.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if existing.Labels == nil {
		existing.Labels = map[string]string{}
	}
	if existing.Annotations == nil {
		existing.Annotations = map[string]string{}
	}
	if existing.Data == nil {
		existing.Data = map[string][]byte{}
	}
	maps.Copy(existing.Labels, s.Labels)
	maps.Copy(existing.Annotations, s.Annotations)
	maps.Copy(existing.Data, s.Data)
	return secrets.Update(ctx, existing, metav1.UpdateOptions{})
}
