// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package mcr is the everyday entry point of mcr, the way controller-runtime's root package is:
// one import gives the manager, the builder and the request types of a multi-cluster controller.
//
//	import mcr "mcr.dev/core"
//
//	mgr, err := mcr.NewManager(cfg, provider, mcr.Options{})
//	err = mcr.NewControllerManagedBy(mgr).
//		For(&corev1.ConfigMap{}).
//		Complete(mcr.Func(func(ctx context.Context, req mcr.Request) (mcr.Result, error) {
//			cl, err := mgr.GetCluster(ctx, req.ClusterName)
//			...
//		}))
//
// Porting from multicluster-runtime is an import swap: every package has the same name and the
// same signatures (see docs/migration.md).
package mcr
