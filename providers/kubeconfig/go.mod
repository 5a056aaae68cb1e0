module mcr.dev/providers/kubeconfig

go 1.26.3

require (
	mcr.dev/conformance v0.0.0
	mcr.dev/core v0.0.0
)

replace (
	mcr.dev/conformance => ../../conformance
	mcr.dev/core => ../../core
)
