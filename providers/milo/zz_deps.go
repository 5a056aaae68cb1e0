package milo

import (
	_ "mcr.dev/conformance"
	_ "mcr.dev/core/clusters"
)
