// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfigstrategy

import (
	"sigs.k8s.io/cluster-inventory-api/pkg/access"

	"mcr.dev/providers/clusterprofile"
)

// The labels and data key of the Secret strategy, the same as mcr's clusterprofile provider
// reads.
const (
	// SecretLabelKeyClusterInventoryConsumer labels a kubeconfig Secret with the consumer it is
	// for, SecretStrategyOption.ConsumerName.
	SecretLabelKeyClusterInventoryConsumer = clusterprofile.SecretLabelConsumer

	// SecretLabelKeyClusterProfile labels a kubeconfig Secret with the name of its
	// ClusterProfile, which lives in the same namespace.
	SecretLabelKeyClusterProfile = clusterprofile.SecretLabelProfile

	// SecretDataKeyKubeConfig is the data key of the kubeconfig in the Secret.
	SecretDataKeyKubeConfig = clusterprofile.SecretDataKey
)

// Option selects the strategy; exactly one of its fields must be set.
type Option struct {
	// Secret selects the Secret strategy.
	Secret *SecretStrategyOption

	// CredentialsProvider selects the KEP-5339 access-provider strategy.
	CredentialsProvider *CredentialsProviderOption
}

// SecretStrategyOption configures the Secret strategy.
type SecretStrategyOption struct {
	// ConsumerName is the value of the SecretLabelKeyClusterInventoryConsumer label of the
	// Secrets to read. Required.
	ConsumerName string
}

// CredentialsProviderOption configures the access-provider strategy.
type CredentialsProviderOption struct {
	// Provider is the operator's access provider configuration, as access.NewFromFile
	// returns it. Required.
	Provider *access.Config
}
