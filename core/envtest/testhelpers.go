// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"crypto/rand"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClientForTest returns a controller-runtime client of the member with its admin credentials
// (see Config) and opts. It fails the test at once if the client cannot be built.
func (m *Member) ClientForTest(t testing.TB, opts client.Options) client.Client {
	t.Helper()
	c, err := client.New(m.Config(), opts)
	if err != nil {
		t.Fatalf("envtest: client of member %q: %v", m.name, err)
	}
	return c
}

// MembersForTest returns the named members of f, in the order given, and fails the test at
// once if one is not in the fleet: for helpers that take member names, such as a package's
// wrapper of NamespaceForTest.
func (f *Fleet) MembersForTest(t testing.TB, names ...string) []*Member {
	t.Helper()
	members := make([]*Member, len(names))
	for i, name := range names {
		if members[i] = f.Member(name); members[i] == nil {
			t.Fatalf("envtest: %v: %q", ErrMemberNotFound, name)
		}
	}
	return members
}

// namespaceRun tells namespaces of this process from those of an earlier run against the same
// members (go test -count, a fleet kept across runs); namespaceCount tells them apart within it.
var (
	namespaceRun   = strings.ToLower(rand.Text()[:5])
	namespaceCount atomic.Int64
)

// NamespaceForTest creates a namespace of the same fresh name in each of members and returns
// the name: prefix (default "test"), then a suffix unique to the call. Tests that share a fleet
// isolate themselves this way. It fails the test at once if the name is not a valid DNS label
// (prefix too long or not lowercase alphanumerics and '-') or a member refuses the namespace.
//
// The namespace is not deleted when the test ends: a fleet runs no namespace controller, so a
// deleted namespace would keep its objects and stay Terminating anyway, and the fleet's data
// goes with the fleet.
func NamespaceForTest(t testing.TB, prefix string, members ...*Member) string {
	t.Helper()
	if prefix == "" {
		prefix = "test"
	}
	name := fmt.Sprintf("%s-%s-%d", prefix, namespaceRun, namespaceCount.Add(1))
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		t.Fatalf("envtest: namespace name %q from prefix %q: %s", name, prefix, strings.Join(errs, "; "))
	}
	for _, m := range members {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := m.ClientForTest(t, client.Options{}).Create(t.Context(), ns); err != nil {
			t.Fatalf("envtest: creating namespace %s in member %q: %v", name, m.name, err)
		}
	}
	return name
}
