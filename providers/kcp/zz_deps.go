package kcp

import (
	_ "github.com/kcp-dev/logicalcluster/v3"
	_ "github.com/kcp-dev/multicluster-provider/apiexport"
	_ "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	_ "mcr.dev/conformance"
	_ "mcr.dev/core/clusters"
)
