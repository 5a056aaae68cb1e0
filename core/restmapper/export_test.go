// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package restmapper

import "k8s.io/apimachinery/pkg/api/meta"

// SameMapper reports whether a and b are one Pool mapper handed to two clusters.
func SameMapper(a, b meta.RESTMapper) bool {
	sa, ok := a.(*shared)
	sb, okb := b.(*shared)
	return ok && okb && sa.RESTMapper == sb.RESTMapper
}
