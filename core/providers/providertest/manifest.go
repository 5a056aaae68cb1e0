// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// ManifestRules returns the rules of the first object of kind ("ClusterRole" or "Role") in the
// multi-document RBAC manifest at path, so that a provider's test can run the provider with
// exactly the permissions its documentation asks for (see envtest.ServiceAccountOptions). The
// role is decoded strictly: a typo in it fails the test. Other documents (bindings, accounts) are
// skipped.
func ManifestRules(path, kind string) ([]rbacv1.PolicyRule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if meta.Kind != kind {
			continue
		}
		var role rbacv1.ClusterRole // a Role has a subset of its fields
		if err := yaml.UnmarshalStrict(doc, &role); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, kind, err)
		}
		return role.Rules, nil
	}
	return nil, fmt.Errorf("%s has no %s", path, kind)
}

// MustManifestRules is ManifestRules for a test: it fails t when the manifest has no such role.
func MustManifestRules(t testing.TB, path, kind string) []rbacv1.PolicyRule {
	t.Helper()
	rules, err := ManifestRules(path, kind)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}
