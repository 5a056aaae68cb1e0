// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
)

const (
	// AdminKubeconfigSubresource is the subresource of Shoots that issues admin credentials
	// (POST an AdminKubeconfigRequest, authentication.gardener.cloud/v1alpha1). The provider
	// needs "create" on shoots/adminkubeconfig.
	AdminKubeconfigSubresource = "adminkubeconfig"

	// SeedSecretName is the Secret in a shoot's control-plane namespace on the seed whose
	// kubeconfig Gardener keeps for talking to the shoot (v1beta1constants.SecretNameGardener);
	// gardener-resource-manager renews the token inside it.
	SeedSecretName = v1beta1constants.SecretNameGardener

	// SeedKubeconfigKey is the data key of the kubeconfig in SeedSecretName.
	SeedKubeconfigKey = "kubeconfig"
)

// ShootClusterName returns the name under which the provider engages the Shoot namespace/name
// in TopologyGarden: "<namespace>/<name>", for example "garden-dev/my-shoot". Shoot names are
// unique only within their project namespace, so the namespace is always part of the name; a
// namespace is never empty, so the name never starts with a slash.
func ShootClusterName(namespace, name string) multicluster.ClusterName {
	return multicluster.NamespacedClusterName(namespace, name)
}

// SeedClusterName returns the name under which the provider engages the extensions Cluster
// object of that name in TopologySeed: the name itself, which is the shoot's technical ID and
// control-plane namespace, e.g. "shoot--dev--my-shoot". Cluster objects are cluster-scoped, so
// the name alone is unique; unlike NamespacedName.String() it has no leading slash.
func SeedClusterName(name string) multicluster.ClusterName {
	return multicluster.ClusterName(name)
}

// ClusterKey returns the object behind a cluster name that ShootClusterName or SeedClusterName
// made: a Shoot's namespace and name, or a Cluster object's name (empty namespace).
func ClusterKey(name multicluster.ClusterName) (types.NamespacedName, error) {
	s := string(name)
	if s == "" || strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") || strings.Count(s, "/") > 1 {
		return types.NamespacedName{}, fmt.Errorf("cluster name %q is neither <namespace>/<shoot> nor <cluster>", name)
	}
	if ns, n, ok := strings.Cut(s, "/"); ok {
		return types.NamespacedName{Namespace: ns, Name: n}, nil
	}
	return types.NamespacedName{Name: s}, nil
}

// clusterName returns the cluster name of the object key of the provider's topology.
func clusterName(key types.NamespacedName) multicluster.ClusterName {
	if key.Namespace == "" {
		return SeedClusterName(key.Name)
	}
	return ShootClusterName(key.Namespace, key.Name)
}

// adminCredentials are admin credentials of one Shoot as the adminkubeconfig subresource issued
// them.
type adminCredentials struct {
	kubeconfig []byte
	// epoch is credentialsEpoch of the Shoot they were requested for.
	epoch string
	// expires is status.expirationTimestamp; renewAt when the provider asks for new ones.
	expires time.Time
	renewAt time.Time
}

// credentialsEpoch summarizes what of a Shoot makes earlier admin credentials unusable: the
// Shoot itself (its UID), the addresses of its API server and the state of a certificate
// authority rotation (after which credentials signed by the old client CA stop working). When
// it changes, the provider requests new credentials at once instead of at the renewal time.
func credentialsEpoch(shoot *gardencorev1beta1.Shoot) string {
	h := sha256.New()
	write := func(parts ...string) {
		for _, s := range parts {
			_, _ = h.Write([]byte(s))
			_, _ = h.Write([]byte{0})
		}
	}
	write(string(shoot.UID))
	for _, a := range shoot.Status.AdvertisedAddresses {
		write(a.Name, a.URL)
	}
	if c := shoot.Status.Credentials; c != nil && c.Rotation != nil && c.Rotation.CertificateAuthorities != nil {
		ca := c.Rotation.CertificateAuthorities
		write(string(ca.Phase))
		for _, t := range []*metav1.Time{ca.LastInitiationTime, ca.LastInitiationFinishedTime, ca.LastCompletionTriggeredTime, ca.LastCompletionTime} {
			if t != nil {
				write(t.UTC().Format(time.RFC3339))
			} else {
				write("")
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// requestAdminKubeconfig asks the adminkubeconfig subresource of shoot for admin credentials
// with the configured lifetime, and works out when to renew them.
func (p *Provider) requestAdminKubeconfig(ctx context.Context, shoot *gardencorev1beta1.Shoot) (*adminCredentials, error) {
	ctx, cancel := context.WithTimeout(ctx, p.opts.CacheSyncTimeout)
	defer cancel()
	req := &authenticationv1alpha1.AdminKubeconfigRequest{
		Spec: authenticationv1alpha1.AdminKubeconfigRequestSpec{ExpirationSeconds: &p.opts.ExpirationSeconds},
	}
	requested := time.Now()
	if err := p.host.GetClient().SubResource(AdminKubeconfigSubresource).Create(ctx, shoot, req); err != nil {
		AdminKubeconfigRequests.WithLabelValues("error").Inc()
		return nil, fmt.Errorf("requesting %s of Shoot %s/%s: %w", AdminKubeconfigSubresource, shoot.Namespace, shoot.Name, err)
	}
	AdminKubeconfigRequests.WithLabelValues("success").Inc()
	return adminCredentialsOf(shoot, &req.Status, requested, p.opts.RefreshFraction)
}

// adminCredentialsOf checks the answer of the adminkubeconfig subresource of shoot to a request
// made at requested, and works out when to renew the credentials: after refreshFraction of
// their lifetime.
func adminCredentialsOf(shoot *gardencorev1beta1.Shoot, status *authenticationv1alpha1.AdminKubeconfigRequestStatus, requested time.Time, refreshFraction float64) (*adminCredentials, error) {
	expires := status.ExpirationTimestamp.Time
	if len(status.Kubeconfig) == 0 {
		return nil, fmt.Errorf("the %s of Shoot %s/%s returned no kubeconfig", AdminKubeconfigSubresource, shoot.Namespace, shoot.Name)
	}
	if !expires.After(requested) {
		return nil, fmt.Errorf("the %s of Shoot %s/%s returned credentials that expire at %s, before they were requested (%s): check the clocks",
			AdminKubeconfigSubresource, shoot.Namespace, shoot.Name, expires.UTC().Format(time.RFC3339), requested.UTC().Format(time.RFC3339))
	}
	// The lifetime is measured from the request on the local clock, so that a skewed garden
	// clock shortens it rather than lengthening it past the real expiry.
	lifetime := expires.Sub(requested)
	return &adminCredentials{
		kubeconfig: status.Kubeconfig,
		epoch:      credentialsEpoch(shoot),
		expires:    expires,
		renewAt:    requested.Add(time.Duration(float64(lifetime) * refreshFraction)),
	}, nil
}

// errNoCredentials marks a kubeconfig whose user has no credentials yet: the "gardener" Secret
// before gardener-resource-manager has written the token into it.
var errNoCredentials = errors.New("the kubeconfig's user has no credentials yet (token not written)")

// loadKubeconfig turns kubeconfig bytes into the shoot's rest.Config under the provider's
// Policy. Errors name fields, never values.
func (p *Provider) loadKubeconfig(data []byte) (*rest.Config, error) {
	cfg, err := kubeconfig.Load(data, p.opts.Policy)
	if err != nil {
		return nil, err
	}
	if cfg.BearerToken == "" && cfg.BearerTokenFile == "" && len(cfg.CertData) == 0 && cfg.CertFile == "" &&
		cfg.Username == "" && cfg.ExecProvider == nil && cfg.AuthProvider == nil {
		return nil, errNoCredentials
	}
	return cfg, nil
}
