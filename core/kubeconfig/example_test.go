// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"errors"
	"fmt"

	"mcr.dev/core/kubeconfig"
)

// A kubeconfig read from a Secret asks to run a program. The hardened default policy refuses it,
// says why and how to allow it, and never repeats the kubeconfig's content.
func ExampleLoad() {
	data := []byte(`apiVersion: v1
kind: Config
current-context: member
contexts:
- {name: member, context: {cluster: member, user: member}}
clusters:
- {name: member, cluster: {server: "https://member.example:6443", certificate-authority-data: Y2E=}}
users:
- name: member
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: get-token
      interactiveMode: Never
`)
	_, err := kubeconfig.Load(data, kubeconfig.Policy{})
	fmt.Println(err)
	fmt.Println(errors.Is(err, kubeconfig.ErrExecPlugin), kubeconfig.Reason(err))

	// The operator trusts this source and opts in to exec plugins only.
	cfg, err := kubeconfig.Load(data, kubeconfig.Policy{AllowExec: true})
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Host, cfg.ExecProvider.Command)

	// Output:
	// exec credential plugin not allowed: user "member" field exec (set Policy.AllowExec to allow it)
	// true ExecPlugin
	// https://member.example:6443 get-token
}

// Re-engage a cluster only when its kubeconfig content changed, not on every update of the object
// that holds it.
func ExampleHash() {
	stored := kubeconfig.Hash([]byte("kubeconfig v1"))
	for _, update := range []string{"kubeconfig v1", "kubeconfig v2"} {
		if h := kubeconfig.Hash([]byte(update)); h != stored {
			fmt.Println("credentials changed: re-engage")
			stored = h
			continue
		}
		fmt.Println("unchanged: keep the engaged cluster")
	}
	// Output:
	// unchanged: keep the engaged cluster
	// credentials changed: re-engage
}

// The server's URL is checked as client-go will dial it. Credentials in the URL are refused
// whatever the policy; plain http needs AllowPlainHTTP. Errors name the field, never the URL.
func ExamplePolicy_server() {
	kubeconfigFor := func(server string) []byte {
		return []byte(`apiVersion: v1
kind: Config
current-context: member
contexts:
- {name: member, context: {cluster: member, user: member}}
clusters:
- {name: member, cluster: {server: "` + server + `"}}
users:
- {name: member, user: {token: s3cr3t}}
`)
	}
	_, err := kubeconfig.Load(kubeconfigFor("https://admin:s3cr3t@member.example:6443"), kubeconfig.Policy{})
	fmt.Println(err)
	_, err = kubeconfig.Load(kubeconfigFor("http://member.example:8080"), kubeconfig.Policy{})
	fmt.Println(err)
	_, err = kubeconfig.Load(kubeconfigFor("http://member.example:8080"), kubeconfig.Policy{AllowPlainHTTP: true})
	fmt.Println(err)

	// Output:
	// user info, query or fragment in a URL not allowed: cluster "member" field server has user info (no Policy field allows it)
	// plain-text http server not allowed: cluster "member" field server is an http:// URL (set Policy.AllowPlainHTTP to allow it)
	// <nil>
}
