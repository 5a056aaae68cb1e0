// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package accesscheck asks a member cluster, with one SelfSubjectReview, whether it answers and
// accepts its credentials: the provider kit's access check before a member is engaged. Its errors
// never carry the member's address.
package accesscheck
