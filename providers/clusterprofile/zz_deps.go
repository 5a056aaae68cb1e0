package clusterprofile

import (
	_ "mcr.dev/conformance"
	_ "mcr.dev/core/clusters"
	_ "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	_ "sigs.k8s.io/cluster-inventory-api/pkg/access"
)
