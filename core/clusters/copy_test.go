// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters_test

import (
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"mcr.dev/core/clusters"
)

// A config copied with CopyConfig shares nothing client-go writes to: copying the copy again (as
// cluster.New and every client built from a cluster do) while the original is read or compared
// is not a data race, which it is with rest.CopyConfig alone (run with -race).
func TestCopyConfigSharesNothing(t *testing.T) {
	orig := &rest.Config{
		Host: "https://127.0.0.1:6443",
		ExecProvider: &clientcmdapi.ExecConfig{
			Command: "get-token", Args: []string{"--cluster", "east"},
			Env:    []clientcmdapi.ExecEnvVar{{Name: "MCR_TOKEN_DIR", Value: "/tokens"}},
			Config: &runtime.Unknown{Raw: []byte(`{"cluster":"east"}`)},
		},
		AuthProvider: &clientcmdapi.AuthProviderConfig{Name: "oidc", Config: map[string]string{"client-id": "mcr"}},
	}
	c := clusters.CopyConfig(orig)
	if c.ExecProvider == orig.ExecProvider || c.AuthProvider == orig.AuthProvider {
		t.Fatal("the copy shares the exec or auth-provider configuration")
	}
	if !clusters.EqualConfigs(orig, c) {
		t.Fatal("the copy is not equal to the original")
	}
	c.ExecProvider.Args[1] = "west"
	c.ExecProvider.Env[0].Value = "/elsewhere"
	c.AuthProvider.Config["client-id"] = "other"
	if orig.ExecProvider.Args[1] != "east" || orig.ExecProvider.Env[0].Value != "/tokens" || orig.AuthProvider.Config["client-id"] != "mcr" {
		t.Fatal("changing the copy changed the original")
	}

	c = clusters.CopyConfig(orig)
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 100 {
			_ = rest.CopyConfig(c)
		}
	})
	for range 100 {
		_ = clusters.EqualConfigs(orig, orig)
	}
	wg.Wait()
	if clusters.CopyConfig(nil) != nil {
		t.Error("CopyConfig(nil) is not nil")
	}
}
