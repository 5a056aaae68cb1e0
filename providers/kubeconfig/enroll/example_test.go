// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package enroll_test

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"mcr.dev/providers/kubeconfig/enroll"
)

// Enroll the cluster of the kubeconfig context "kind-east" into the fleet whose kubeconfig
// provider watches the host of context "kind-hub", binding the member's built-in "view" role.
func ExampleMember() {
	load := func(context string) (*rest.Config, error) {
		return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			clientcmd.NewDefaultClientConfigLoadingRules(),
			&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	}
	member, err := load("kind-east")
	if err != nil {
		return
	}
	host, err := load("kind-hub")
	if err != nil {
		return
	}
	res, err := enroll.Member(context.Background(), member, host, enroll.Options{
		SecretName:   "east",
		ClusterRoles: []string{"view"},
	})
	if err != nil {
		return
	}
	fmt.Println("enrolled; enroll again before", res.Expiration)
}
