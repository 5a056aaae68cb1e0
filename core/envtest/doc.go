// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package envtest starts a fleet of real Kubernetes API servers for tests: one etcd and any
// number of kube-apiservers (members) that share it, each under its own etcd prefix, so every
// member is an isolated cluster with its own data, certificates and credentials.
//
// It is the multi-cluster counterpart of controller-runtime's envtest. Multi-cluster
// controllers, providers and the conformance suite need several clusters at once, clusters
// that appear while a manager runs, and clusters that go away and come back; a Fleet gives
// all three cheaply (one etcd, one apiserver process per member, everything on 127.0.0.1).
//
// Start takes the kube-apiserver and etcd binaries from the first of these that is set:
// Options.BinaryDir, $MCR_ENVTEST_ASSETS, $KUBEBUILDER_ASSETS (controller-runtime's variable,
// as `setup-envtest use -p path` prints it), and bin/envtest/<KubernetesVersion> of the
// repository, where `make envtest` builds them from the Go module proxy.
//
// Typical use in a test:
//
//	fleet := envtest.StartForTest(t, "east", "west")
//	eastClient, err := client.New(fleet.Member("east").Config(), client.Options{})
//	...
//	fleet.Member("west").Stop()  // outage: requests to west now fail
//	fleet.Member("west").Start(ctx) // west is back, on the same address, with its data
//
// Every member serves real TLS with its own self-signed CA generated in-process; the admin
// credentials are a client certificate in the system:masters group. Authorization is RBAC and
// service-account tokens are signed, so Member.ServiceAccountKubeconfig hands out limited
// credentials exactly as a real cluster would.
//
// A provider whose source of truth is another system's server runs it the same way:
// StartProcess starts its binary as a child process (output prefixed and kept for errors,
// WaitUntil with ProbeOK for readiness, Stop), and StartTLSServer serves a stand-in where the
// real system cannot run in a test (an HTTP/2 TLS endpoint whose Close ends open watches). The
// kcp provider's kcptest and the Gardener provider's tests are built on both.
package envtest
