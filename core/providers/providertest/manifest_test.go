// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcr.dev/core/providers/providertest"
)

const manifest = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: p
rules:
  - apiGroups: [""]
    resources: ["secrets"]
    verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: p
  namespace: ns
rules:
  - apiGroups: ["events.k8s.io"]
    resources: ["events"]
    verbs: ["create"]
`

func write(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestManifestRules(t *testing.T) {
	path := write(t, "rbac.yaml", manifest)
	cluster, err := providertest.ManifestRules(path, "ClusterRole")
	if err != nil || len(cluster) != 1 || cluster[0].Resources[0] != "secrets" {
		t.Errorf("ClusterRole rules = %v, %v; want the secrets rule", cluster, err)
	}
	role, err := providertest.ManifestRules(path, "Role")
	if err != nil || len(role) != 1 || role[0].Resources[0] != "events" {
		t.Errorf("Role rules = %v, %v; want the events rule", role, err)
	}
	if _, err := providertest.ManifestRules(write(t, "only-role.yaml", manifest[strings.Index(manifest, "---\n")+4:]), "ClusterRole"); err == nil {
		t.Error("a manifest without a ClusterRole was accepted")
	}
	if _, err := providertest.ManifestRules(write(t, "typo.yaml", strings.Replace(manifest, "verbs:", "verb:", 1)), "ClusterRole"); err == nil {
		t.Error("a manifest with an unknown field was accepted")
	}
}

func TestMustManifestRules(t *testing.T) {
	rules := providertest.MustManifestRules(t, write(t, "rbac.yaml", manifest), "Role")
	if len(rules) != 1 || rules[0].Resources[0] != "events" {
		t.Errorf("Role rules = %v; want the events rule", rules)
	}
}
