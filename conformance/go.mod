module mcr.dev/conformance

go 1.26.3

require mcr.dev/core v0.0.0

replace mcr.dev/core => ../core
