// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
)

// The deprecated Secret strategy of the Cluster Inventory API: a consumer finds the kubeconfig of
// a ClusterProfile in a Secret of the profile's namespace that carries both labels below, under
// the data key "Config". The values are those of multicluster-runtime's cluster-inventory-api
// provider.
const (
	// SecretLabelConsumer labels a kubeconfig Secret with the consumer it is meant for
	// (SecretStrategy.ConsumerName).
	SecretLabelConsumer = "x-k8s.io/cluster-inventory-consumer"

	// SecretLabelProfile labels a kubeconfig Secret with the name of its ClusterProfile.
	SecretLabelProfile = "x-k8s.io/cluster-profile"

	// SecretDataKey is the key of the kubeconfig in the Secret's data.
	SecretDataKey = "Config"
)

// ClusterName returns the name under which the provider engages the ClusterProfile
// namespace/name: "<namespace>/<name>". ClusterProfiles are namespaced (a ClusterSet's profiles
// share a namespace, and several cluster managers may register the same cluster in different
// namespaces), so the namespace is always part of the name. It is the name
// multicluster-runtime's cluster-inventory-api provider uses.
func ClusterName(namespace, name string) multicluster.ClusterName {
	return multicluster.NamespacedClusterName(namespace, name)
}

// ClusterKey returns the namespace and name of the ClusterProfile behind a cluster name that
// ClusterName made.
func ClusterKey(name multicluster.ClusterName) (types.NamespacedName, error) {
	return multicluster.ParseNamespacedClusterName(name)
}

// credentials is what the provider engages a cluster with.
type credentials struct {
	cfg *rest.Config
	// source says where the credentials come from, for logs and Events: `access provider
	// "token"` or `Secret ns/name`. Never a credential.
	source string
	// secret is the kubeconfig Secret of the Secret strategy, nil for access providers.
	secret *corev1.Secret
	// deprecated is true when the access provider came from status.credentialProviders.
	deprecated bool
}

// credentialError is a failure to obtain credentials, with the Event and metric reasons.
type credentialError struct {
	reason       string // Event reason
	metricReason string
	secret       *corev1.Secret // related object, may be nil
	err          error
}

func (e *credentialError) Error() string { return e.err.Error() }
func (e *credentialError) Unwrap() error { return e.err }

// credentialsOf returns the credentials of a ClusterProfile: through the first of the
// operator's access providers the profile lists, or else, when the Secret strategy is on, from
// the profile's kubeconfig Secret.
func (p *Provider) credentialsOf(ctx context.Context, cp *v1alpha1.ClusterProfile) (*credentials, error) {
	var accessErr error
	if p.opts.AccessProviders != nil {
		res, err := buildAccessConfig(p.opts.AccessProviders, cp, p.opts.Policy)
		if err == nil {
			return &credentials{cfg: res.cfg, source: fmt.Sprintf("access provider %q", res.provider), deprecated: res.deprecated}, nil
		}
		if !errors.Is(err, errNoAccessProvider) {
			reason := kubeconfig.Reason(err)
			if reason == "" {
				reason = ReasonInvalidAccessProvider
			}
			return nil, &credentialError{reason: ReasonInvalidAccessProvider, metricReason: reason, err: err}
		}
		accessErr = err
	}
	if p.opts.Secret == nil {
		return nil, &credentialError{reason: ReasonNoAccessProvider, metricReason: ReasonNoAccessProvider, err: accessErr}
	}
	creds, err := p.secretCredentials(ctx, cp)
	if err != nil && accessErr != nil {
		var ce *credentialError
		if errors.As(err, &ce) {
			ce.err = fmt.Errorf("%w; and %w", accessErr, ce.err)
		}
	}
	return creds, err
}

// secretCredentials reads the kubeconfig of cp from its Secret (the deprecated Secret strategy)
// under the hardened kubeconfig policy.
func (p *Provider) secretCredentials(ctx context.Context, cp *v1alpha1.ClusterProfile) (*credentials, error) {
	var list corev1.SecretList
	if err := p.host.GetCache().List(ctx, &list, client.InNamespace(cp.Namespace), client.MatchingLabels{
		SecretLabelConsumer: p.opts.Secret.ConsumerName,
		SecretLabelProfile:  cp.Name,
	}); err != nil {
		return nil, fmt.Errorf("listing kubeconfig Secrets: %w", err)
	}
	labels := fmt.Sprintf("%s=%s,%s=%s", SecretLabelConsumer, p.opts.Secret.ConsumerName, SecretLabelProfile, cp.Name)
	switch len(list.Items) {
	case 0:
		return nil, &credentialError{reason: ReasonKubeconfigSecretMissing, metricReason: ReasonKubeconfigSecretMissing,
			err: fmt.Errorf("no kubeconfig Secret in namespace %s labeled %s", cp.Namespace, labels)}
	case 1:
	default:
		names := make([]string, 0, len(list.Items))
		for _, s := range list.Items {
			names = append(names, s.Name)
		}
		return nil, &credentialError{reason: kit.ReasonInvalidKubeconfig, metricReason: reasonAmbiguousSecrets,
			err: fmt.Errorf("%d kubeconfig Secrets in namespace %s labeled %s (%s), want exactly one", len(names), cp.Namespace, labels, strings.Join(names, ", "))}
	}
	secret := &list.Items[0]
	where := fmt.Sprintf("Secret %s/%s", secret.Namespace, secret.Name)
	data := secret.Data[SecretDataKey]
	if len(data) == 0 {
		return nil, &credentialError{reason: kit.ReasonInvalidKubeconfig, metricReason: reasonMissingData, secret: secret,
			err: fmt.Errorf("kubeconfig %s has no data under key %q", where, SecretDataKey)}
	}
	cfg, err := kubeconfig.Load(data, p.opts.Policy)
	if err != nil {
		reason := kubeconfig.Reason(err)
		if reason == "" {
			reason = kit.ReasonInvalidKubeconfig
		}
		return nil, &credentialError{reason: kit.ReasonInvalidKubeconfig, metricReason: reason, secret: secret,
			err: fmt.Errorf("kubeconfig %s: %w", where, err)}
	}
	return &credentials{cfg: cfg, source: where, secret: secret}, nil
}
