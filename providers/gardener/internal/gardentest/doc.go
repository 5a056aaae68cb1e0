// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package gardentest runs a real Gardener API for the Gardener provider's tests: gardener-apiserver
// (built from the Go module proxy by `make gardener-apiserver`) aggregated into a kube-apiserver
// that plays the garden cluster, on an etcd of its own, beside kube-apiservers that play the
// shoots' control planes.
//
// What the real gardener-apiserver serves here is what a landscape's serves: Shoots with their
// validation and admission, InternalSecrets, and the adminkubeconfig subresource, which signs a
// short-lived client certificate with the Shoot's client CA (the InternalSecret
// "<shoot>.ca-client" in the project namespace) for the shoot's advertised address, trusting the
// cluster CA of the ConfigMap "<shoot>.ca-cluster". ProvideShoot writes both for a shoot server
// and makes that server trust the client CA, as gardenlet does when it creates a shoot;
// RotateClientCA is a certificate-authority rotation. What a garden has besides (gardenlet,
// gardener-controller-manager, seeds) does not run: the tests write Shoot status as gardenlet
// would.
package gardentest
