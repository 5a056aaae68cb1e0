// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener

import (
	"context"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
)

// TestOptionsIsUsableIsReadyFormerName: the deprecated IsUsable still selects the Shoots to
// engage when IsReady is unset, and is not the default whose reasons are logged.
func TestOptionsIsUsableIsReadyFormerName(t *testing.T) {
	never := func(context.Context, *gardencorev1beta1.Shoot) bool { return false }
	o := Options{IsUsable: never}.withDefaults()
	if o.IsReady == nil || o.IsReady(context.Background(), &gardencorev1beta1.Shoot{}) {
		t.Error("IsReady does not follow the deprecated IsUsable")
	}
	if o.defaultIsReady {
		t.Error("a predicate given as IsUsable counts as the default")
	}
	if d := (Options{}).withDefaults(); !d.defaultIsReady || d.IsReady == nil {
		t.Error("without IsReady and IsUsable, IsReady is not the default")
	}
}
