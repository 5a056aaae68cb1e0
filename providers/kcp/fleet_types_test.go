// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp_test

import (
	"reflect"
	"testing"

	corefleet "mcr.dev/core/fleet"
	"mcr.dev/providers/kcp"
)

// TestOneFleetReadAPI checks that the kcp provider's fleet reader is core's: the reader, the
// option that restricts a List to some clusters and the registration are core/fleet's types,
// and kcp's old names are the same types, so that an InClusters of either package restricts
// either reader (two types, each ignored by the other reader, once returned the whole fleet).
func TestOneFleetReadAPI(t *testing.T) {
	var p *kcp.Provider
	if got, want := reflect.TypeOf(p.Fleet), reflect.TypeOf(func() *corefleet.Reader { return nil }); got.Out(0) != want.Out(0) {
		t.Errorf("Provider.Fleet returns %v, want %v", got.Out(0), want.Out(0))
	}
	for _, pair := range [][2]reflect.Type{
		{reflect.TypeFor[kcp.InClusters](), reflect.TypeFor[corefleet.InClusters]()},          //nolint:staticcheck // the deprecated name is what is checked
		{reflect.TypeFor[kcp.FleetRegistration](), reflect.TypeFor[corefleet.Registration]()}, //nolint:staticcheck // idem
		{reflect.TypeFor[kcp.Fleet](), reflect.TypeFor[corefleet.Reader]()},                   //nolint:staticcheck // idem
		{reflect.TypeFor[kcp.FleetHandlerFuncs](), reflect.TypeFor[corefleet.HandlerFuncs]()}, //nolint:staticcheck // idem
	} {
		if pair[0] != pair[1] {
			t.Errorf("%v is a type of its own, want an alias of %v", pair[0], pair[1])
		}
	}
}
