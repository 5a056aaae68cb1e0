// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command clusterprofile-token-plugin is a reference exec credential plugin for ClusterProfile
// access providers (KEP-5339): it returns the bearer token of a member cluster, read from a
// Secret on the hub cluster.
//
// The operator lists it in the access provider file (-clusterprofile-provider-file):
//
//	{"providers": [{"name": "token",
//	  "execConfig": {"apiVersion": "client.authentication.k8s.io/v1",
//	    "command": "/plugins/clusterprofile-token-plugin",
//	    "args": ["-namespace", "fleet-tokens"], "provideClusterInfo": true}}]}
//
// and a cluster manager lists the provider in the ClusterProfile's status.accessProviders, with
// the member's server and CA and a client.authentication.k8s.io/exec extension that says which
// token to use:
//
//	{"clusterName": "east"}                          // the Secret <namespace>/east
//	{"clusterName": "east", "secretName": "east-2"}  // the Secret <namespace>/east-2
//
// The Secret holds the token under the data key "token" (-key, or $CLUSTERPROFILE_TOKEN_KEY when
// -key is not given: an operator whose provider allows profile-sourced env, e.g.
// profileSourcedEnvVarsPolicy: AppendIfNotExists, lets cluster managers choose the key through
// the profile's clusterprofiles.multicluster.x-k8s.io/exec/additional-envs extension). If it also holds a "server"
// key, the plugin refuses to hand the token to any other server than that one, so that a
// ClusterProfile pointing at a foreign server cannot obtain another member's token.
//
// The answer expires at the token's own expiry (the exp claim of a JWT) or after -refresh-after,
// whichever comes first, so that client-go picks up a rotated token in the Secret without any
// change to the ClusterProfile; client-go also asks again when the member answers 401.
//
// The plugin reads the hub through -kubeconfig, else $KUBECONFIG, else the in-cluster
// ServiceAccount; it needs get on secrets in -namespace and nothing else. It never prints the
// token anywhere but in its answer on stdout.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"mcr.dev/providers/clusterprofile/plugin"
)

const name = "clusterprofile-token-plugin"

// inClusterNamespaceFile holds the namespace of the pod's ServiceAccount.
const inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Token Secret data keys besides the token.
const serverKey = "server"

// keyEnv is the environment variable that sets the default of -key.
const keyEnv = "CLUSTERPROFILE_TOKEN_KEY"

// config is the ClusterProfile's client.authentication.k8s.io/exec extension.
type config struct {
	// ClusterName names the member; the token Secret has this name unless SecretName is set.
	ClusterName string `json:"clusterName"`
	// SecretName names the token Secret, e.g. after a rotation to a new Secret.
	SecretName string `json:"secretName,omitempty"`
}

type options struct {
	kubeconfig   string
	namespace    string
	key          string
	refreshAfter time.Duration
	timeout      time.Duration
}

func main() {
	var o options
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Kubeconfig of the hub cluster that holds the token Secrets (default: $KUBECONFIG, else in-cluster).")
	fs.StringVar(&o.namespace, "namespace", "", "Namespace of the token Secrets on the hub (default: the namespace of the pod's ServiceAccount, else \"default\").")
	fs.StringVar(&o.key, "key", "", "Data key of the token in the Secrets (default: $"+keyEnv+", else \"token\").")
	fs.DurationVar(&o.refreshAfter, "refresh-after", 5*time.Minute, "Longest time client-go may use a token before running the plugin again (0: the token's own expiry only).")
	fs.DurationVar(&o.timeout, "timeout", 20*time.Second, "Bound on reading the token Secret.")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if o.key == "" {
		o.key = os.Getenv(keyEnv)
	}
	if o.key == "" {
		o.key = "token"
	}
	if o.namespace == "" {
		o.namespace = "default"
		if data, err := os.ReadFile(inClusterNamespaceFile); err == nil && strings.TrimSpace(string(data)) != "" {
			o.namespace = strings.TrimSpace(string(data))
		}
	}
	plugin.Main(name, o.token)
}

// token returns the member's token from its Secret on the hub.
func (o options) token(ctx context.Context, req *plugin.Request) (plugin.Credential, error) {
	server, err := req.Server()
	if err != nil {
		return plugin.Credential{}, err
	}
	var cfg config
	if err := req.DecodeConfig(&cfg); err != nil {
		return plugin.Credential{}, err
	}
	if cfg.ClusterName == "" {
		return plugin.Credential{}, errors.New("spec.cluster.config.clusterName is empty")
	}
	secretName := cfg.SecretName
	if secretName == "" {
		secretName = cfg.ClusterName
	}

	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	restCfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return plugin.Credential{}, fmt.Errorf("loading the hub's kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return plugin.Credential{}, fmt.Errorf("creating a hub client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	secret, err := cs.CoreV1().Secrets(o.namespace).Get(ctx, secretName, metav1.GetOptions{})
	if err != nil {
		return plugin.Credential{}, fmt.Errorf("reading the token Secret of cluster %q: %w", cfg.ClusterName, err)
	}
	where := fmt.Sprintf("Secret %s/%s", o.namespace, secretName)
	token := strings.TrimSpace(string(secret.Data[o.key]))
	if token == "" {
		return plugin.Credential{}, fmt.Errorf("%s has no data under key %q", where, o.key)
	}
	if bound, ok := secret.Data[serverKey]; ok && normalize(string(bound)) != normalize(server) {
		return plugin.Credential{}, fmt.Errorf("%s is bound to another server than %s (data key %q); refusing to hand its token over", where, describeServer(server), serverKey)
	}
	var refreshBy time.Time
	if o.refreshAfter > 0 {
		refreshBy = time.Now().Add(o.refreshAfter)
	}
	return plugin.Credential{Token: token, Expiration: plugin.Earliest(plugin.TokenExpiry(token), refreshBy)}, nil
}

func normalize(server string) string {
	return strings.TrimRight(strings.TrimSpace(server), "/")
}

// describeServer returns server for a message: without user info, query and fragment, which
// may carry credentials and are no part of where the member is.
func describeServer(server string) string {
	u, err := url.Parse(strings.TrimSpace(server))
	if err != nil || u.Host == "" {
		return "the server of the request (not a URL)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}
