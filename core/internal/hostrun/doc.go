// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package hostrun ties a provider's run to a host cluster the provider built itself: the host
// runs as long as the provider, and the provider ends with an error when the host stops first.
package hostrun
