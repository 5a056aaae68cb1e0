// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/internal/testcheck"
)

func TestTestHelpers(t *testing.T) {
	fleet := envtest.StartForTest(t, "one", "two")
	one, two := fleet.Member("one"), fleet.Member("two")

	t.Run("ClientForTest is an admin client of its member with opts", func(t *testing.T) {
		ns := &corev1.Namespace{}
		if err := one.ClientForTest(t, client.Options{}).Get(t.Context(), client.ObjectKey{Name: "kube-system"}, ns); err != nil {
			t.Fatalf("reading kube-system: %v", err)
		}
		empty := one.ClientForTest(t, client.Options{Scheme: runtime.NewScheme()})
		if err := empty.Get(t.Context(), client.ObjectKey{Name: "kube-system"}, ns); err == nil || !strings.Contains(err.Error(), "no kind is registered") {
			t.Errorf("Get with an empty scheme: %v, want an unregistered kind", err)
		}
	})

	t.Run("NamespaceForTest creates one fresh name in each member", func(t *testing.T) {
		first := envtest.NamespaceForTest(t, "helpers", one, two)
		second := envtest.NamespaceForTest(t, "helpers", one)
		if first == second {
			t.Fatalf("two calls returned the same namespace %s", first)
		}
		for _, name := range []string{first, second} {
			if !strings.HasPrefix(name, "helpers-") || len(validation.IsDNS1123Label(name)) > 0 {
				t.Errorf("namespace %q: want a DNS label starting with helpers-", name)
			}
		}
		exists := func(m *envtest.Member, name string) bool {
			t.Helper()
			err := m.ClientForTest(t, client.Options{}).Get(t.Context(), client.ObjectKey{Name: name}, &corev1.Namespace{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatalf("reading namespace %s in %s: %v", name, m.Name(), err)
			}
			return err == nil
		}
		for _, c := range []struct {
			member *envtest.Member
			name   string
			want   bool
		}{{one, first, true}, {two, first, true}, {one, second, true}, {two, second, false}} {
			if got := exists(c.member, c.name); got != c.want {
				t.Errorf("namespace %s exists in %s: %t, want %t", c.name, c.member.Name(), got, c.want)
			}
		}
		if name := envtest.NamespaceForTest(t, ""); !strings.HasPrefix(name, "test-") {
			t.Errorf("namespace of the default prefix: %q, want test-…", name)
		}
	})

	t.Run("NamespaceForTest fails on a prefix that makes no DNS label", func(t *testing.T) {
		for _, prefix := range []string{"Upper", "under_score", strings.Repeat("x", 60)} {
			msg := testcheck.Failure(t, func(tb testing.TB) { envtest.NamespaceForTest(tb, prefix, one) })
			if !strings.Contains(msg, "namespace name") || !strings.Contains(msg, prefix) {
				t.Errorf("prefix %q: failure %q, want one naming the prefix", prefix, msg)
			}
		}
	})

	t.Run("MembersForTest resolves names and fails on an unknown one", func(t *testing.T) {
		if got := fleet.MembersForTest(t, "two", "one"); len(got) != 2 || got[0] != two || got[1] != one {
			t.Errorf("MembersForTest(two, one) = %v, want members two and one", got)
		}
		msg := testcheck.Failure(t, func(tb testing.TB) { fleet.MembersForTest(tb, "one", "three") })
		if !strings.Contains(msg, `"three"`) || !strings.Contains(msg, envtest.ErrMemberNotFound.Error()) {
			t.Errorf("failure %q, want member not found naming three", msg)
		}
	})

	// Last, as it leaves member two stopped.
	t.Run("NamespaceForTest fails when a member does not answer", func(t *testing.T) {
		if err := two.Stop(); err != nil {
			t.Fatal(err)
		}
		msg := testcheck.Failure(t, func(tb testing.TB) { envtest.NamespaceForTest(tb, "down", one, two) })
		if !strings.Contains(msg, `in member "two"`) {
			t.Errorf("failure %q, want one naming member two", msg)
		}
	})
}
