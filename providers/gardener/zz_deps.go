package gardener

import (
	_ "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	_ "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	_ "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	_ "mcr.dev/conformance"
	_ "mcr.dev/core/clusters"
)
