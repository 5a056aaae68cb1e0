// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo

// SetServiceHost replaces, for the providers created until restore is called, the URL the default
// ControlPlaneHost of ModeProjectControlPlane builds (its check of the project name stays).
func SetServiceHost(f func(project string) string) (restore func()) {
	old := serviceHost
	serviceHost = f
	return func() { serviceHost = old }
}
