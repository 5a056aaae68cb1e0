// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package multi_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"mcr.dev/core/clusters"
	clustersprovider "mcr.dev/core/providers/clusters"
	"mcr.dev/core/providers/multi"
)

// defaultsRecorder is a member provider that takes the manager's cluster defaults.
type defaultsRecorder struct {
	*clustersprovider.Provider
	got []clusters.Defaults
}

func (r *defaultsRecorder) SetClusterDefaults(d clusters.Defaults) { r.got = append(r.got, d) }

// The manager's cluster defaults reach every member provider that takes them, added before or
// after they are set, once each; a member provider that does not take them is left alone.
func TestClusterDefaultsReachMemberProviders(t *testing.T) {
	m := multi.New(multi.Options{})
	before := &defaultsRecorder{Provider: clustersprovider.New()}
	if err := m.AddProvider("before", before); err != nil {
		t.Fatal(err)
	}
	if err := m.AddProvider("plain", clustersprovider.New()); err != nil {
		t.Fatal(err)
	}
	d := clusters.Defaults{Scheme: runtime.NewScheme(), QPS: 7, Burst: 9}
	m.SetClusterDefaults(d)
	after := &defaultsRecorder{Provider: clustersprovider.New()}
	if err := m.AddProvider("after", after); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*defaultsRecorder{"before": before, "after": after} {
		if len(r.got) != 1 || r.got[0].Scheme != d.Scheme || r.got[0].QPS != 7 || r.got[0].Burst != 9 {
			t.Errorf("provider %s got defaults %+v, want the manager's once", name, r.got)
		}
	}
}
