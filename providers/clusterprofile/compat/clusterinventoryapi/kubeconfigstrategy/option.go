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

// Option selects the strategy: exactly one of Secret and AccessProvider (or its deprecated name
// CredentialsProvider) must be set.
type Option struct {
	// Secret selects the Secret strategy.
	Secret *SecretStrategyOption

	// AccessProvider selects the KEP-5339 access-provider strategy (upstream's main branch
	// name, multicluster-runtime PR 164).
	AccessProvider *AccessProviderOption

	// CredentialsProvider selects the KEP-5339 access-provider strategy: v0.24.1's name.
	//
	// Deprecated: use AccessProvider; setting both is an error.
	CredentialsProvider *CredentialsProviderOption
}

// SecretStrategyOption configures the Secret strategy.
type SecretStrategyOption struct {
	// ConsumerName is the value of the SecretLabelKeyClusterInventoryConsumer label of the
	// Secrets to read. Required.
	ConsumerName string
}

// AccessProviderOption configures the access-provider strategy.
type AccessProviderOption struct {
	// Provider is the operator's access provider configuration, as access.NewFromFile
	// returns it. Required.
	Provider *access.Config
}

// CredentialsProviderOption is v0.24.1's name of AccessProviderOption, an alias so that
// programs of either upstream version compile.
//
// Deprecated: use AccessProviderOption.
type CredentialsProviderOption = AccessProviderOption
