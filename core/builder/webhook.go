// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package builder

import (
	"k8s.io/apimachinery/pkg/runtime"
	ctrlbuilder "sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// WebhookBuilder is controller-runtime's webhook builder. Admission webhooks are served by the
// process for the local cluster only, so there is nothing multi-cluster about them.
type WebhookBuilder[T runtime.Object] = ctrlbuilder.WebhookBuilder[T]

// WebhookManagedBy starts building a webhook served by the local manager
// (mcmanager.Manager.GetLocalManager()).
func WebhookManagedBy[T runtime.Object](m manager.Manager, object T) *WebhookBuilder[T] {
	return ctrlbuilder.WebhookManagedBy(m, object)
}
