// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package plugin_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"mcr.dev/providers/clusterprofile/plugin"
)

// A plugin that answers with a token per member. client-go sets KUBERNETES_EXEC_INFO; here the
// environment is simulated, and the answer goes to stdout as client-go reads it.
func ExampleRun() {
	execInfo := `{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
	  "spec": {"cluster": {"server": "https://east.example:6443", "config": {"clusterName": "east"}}}}`
	tokens := map[string]string{"east": "token-of-east"}

	code := plugin.Run(context.Background(), "example-plugin", func(_ context.Context, req *plugin.Request) (plugin.Credential, error) {
		var cfg struct {
			ClusterName string `json:"clusterName"`
		}
		if err := req.DecodeConfig(&cfg); err != nil {
			return plugin.Credential{}, err
		}
		token, ok := tokens[cfg.ClusterName]
		if !ok {
			return plugin.Credential{}, fmt.Errorf("no token for cluster %q", cfg.ClusterName)
		}
		return plugin.Credential{Token: token, Expiration: plugin.TokenExpiry(token)}, nil
	}, plugin.IO{
		Getenv: func(key string) string {
			if key == plugin.ExecInfoEnv {
				return execInfo
			}
			return ""
		},
		Stdout: os.Stdout,
		Stderr: os.Stdout,
	})
	fmt.Println("exit code", code)
	// Output:
	// {"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false},"status":{"token":"token-of-east"}}
	// exit code 0
}

// A real plugin's main function.
func ExampleMain() {
	main := func() {
		plugin.Main("my-plugin", func(_ context.Context, req *plugin.Request) (plugin.Credential, error) {
			server, err := req.Server()
			if err != nil {
				return plugin.Credential{}, err
			}
			return plugin.Credential{Token: "token-for-" + strings.TrimPrefix(server, "https://")}, nil
		})
	}
	_ = main // go build it as the plugin's main package
}
