// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package plugin helps write client-go exec credential plugins (KEP-541) for ClusterProfile
// access providers (KEP-5339): programs that an operator lists in the
// -clusterprofile-provider-file and that print credentials for one member cluster.
//
// client-go runs the plugin with the environment variable KUBERNETES_EXEC_INFO set to an
// ExecCredential whose spec.cluster describes the member (server, CA, ...) when the provider's
// execConfig sets provideClusterInfo: true; spec.cluster.config is the ClusterProfile's
// client.authentication.k8s.io/exec extension, verbatim. The plugin answers with an
// ExecCredential on stdout: a token, or a client certificate and key, and optionally an
// expiration after which client-go runs it again. client-go also runs it again when the member
// answers 401.
//
// A plugin is a main function around Main:
//
//	func main() {
//		plugin.Main("my-plugin", func(ctx context.Context, req *plugin.Request) (plugin.Credential, error) {
//			var cfg struct{ ClusterName string `json:"clusterName"` }
//			if err := req.DecodeConfig(&cfg); err != nil {
//				return plugin.Credential{}, err
//			}
//			token, err := lookUp(ctx, cfg.ClusterName)
//			return plugin.Credential{Token: token, Expiration: plugin.TokenExpiry(token)}, err
//		})
//	}
//
// Main reads the request, calls the function, writes the answer in the API version client-go
// asked for (client.authentication.k8s.io/v1 or v1beta1) and exits; on error it prints
// "[name] message" on stderr and exits 1. Messages must never contain credentials: client-go
// copies the plugin's stderr to the controller's.
//
// cmd/clusterprofile-token-plugin in this module is a complete plugin built on this package.
package plugin
