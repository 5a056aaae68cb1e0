// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command kubeconfig-secret enrolls a member cluster into a fleet served by mcr's kubeconfig
// provider. On the member it creates a ServiceAccount with least-privilege RBAC and mints a token
// for it (TokenRequest API); on the host it writes a labeled Secret holding a kubeconfig with
// that token, which the provider engages. Run it again to rotate the token.
//
//	kubeconfig-secret --name east --member-context kind-east --host-context kind-hub
//	kubeconfig-secret --name east --member-kubeconfig east.yaml --cluster-role view --print > east-secret.yaml
//
// See docs/providers/kubeconfig.md of the mcr repository for the RBAC it creates and needs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"mcr.dev/providers/kubeconfig"
	"mcr.dev/providers/kubeconfig/enroll"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "kubeconfig-secret:", err)
		}
		os.Exit(1)
	}
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kubeconfig-secret", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		o                enroll.Options
		memberKubeconfig = fs.String("member-kubeconfig", "", "kubeconfig of the member, with rights to create a ServiceAccount and RBAC (default: $KUBECONFIG or ~/.kube/config)")
		memberContext    = fs.String("member-context", "", "context of --member-kubeconfig (default: its current context)")
		hostKubeconfig   = fs.String("host-kubeconfig", "", "kubeconfig of the host cluster the provider watches (default: $KUBECONFIG or ~/.kube/config)")
		hostContext      = fs.String("host-context", "", "context of --host-kubeconfig (default: its current context)")
		rulesFile        = fs.String("rules-file", "", "YAML or JSON list of RBAC PolicyRules granted cluster-wide on the member, replacing the default (read-only namespaces); \"[]\" grants none")
		clusterRoles     stringList
		printOnly        = fs.Bool("print", false, "print the Secret as YAML instead of writing it to the host")
		requestTimeout   = fs.Duration("timeout", 2*time.Minute, "bound for the whole operation")
	)
	fs.StringVar(&o.SecretName, "name", "", "name of the Secret on the host, and so of the cluster (required)")
	fs.StringVar(&o.SecretNamespace, "namespace", kubeconfig.DefaultNamespace, "host namespace of the Secret (the one the provider watches)")
	fs.StringVar(&o.SecretLabel, "label", kubeconfig.DefaultSecretLabel, "label (value \"true\") the provider selects Secrets by; "+kubeconfig.UpstreamSecretLabel+" for multicluster-runtime's provider")
	fs.StringVar(&o.SecretKey, "key", kubeconfig.DefaultSecretKey, "data key of the kubeconfig in the Secret")
	fs.StringVar(&o.ServiceAccountNamespace, "service-account-namespace", enroll.DefaultServiceAccountNamespace, "member namespace of the ServiceAccount")
	fs.StringVar(&o.ServiceAccountName, "service-account", enroll.DefaultServiceAccountName, "name of the ServiceAccount on the member")
	fs.DurationVar(&o.TokenExpiration, "token-expiration", enroll.DefaultTokenExpiration, "requested token lifetime; run again before it ends to rotate")
	fs.StringVar(&o.Server, "server", "", "member API server URL as the provider reaches it (default: the server of --member-kubeconfig)")
	fs.StringVar(&o.TLSServerName, "tls-server-name", "", "server name to verify the member's certificate against (default: the host of --server)")
	fs.Var(&clusterRoles, "cluster-role", "existing ClusterRole on the member to bind to the ServiceAccount as well, e.g. view (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if o.SecretName == "" {
		fs.Usage()
		return errors.New("--name is required")
	}
	o.ClusterRoles = clusterRoles
	if *rulesFile != "" {
		data, err := os.ReadFile(*rulesFile)
		if err != nil {
			return err
		}
		rules := []rbacv1.PolicyRule{}
		if err := yaml.UnmarshalStrict(data, &rules); err != nil {
			return fmt.Errorf("reading %s: %w", *rulesFile, err)
		}
		o.ClusterRules = rules
	}

	ctx, cancel := context.WithTimeout(ctx, *requestTimeout)
	defer cancel()
	memberConfig, err := loadConfig(*memberKubeconfig, *memberContext)
	if err != nil {
		return fmt.Errorf("member kubeconfig: %w", err)
	}

	if *printOnly {
		res, err := enroll.Kubeconfig(ctx, memberConfig, o)
		if err != nil {
			return err
		}
		out, err := yaml.Marshal(res.Secret)
		if err != nil {
			return err
		}
		_, err = stdout.Write(out)
		return err
	}

	hostConfig, err := loadConfig(*hostKubeconfig, *hostContext)
	if err != nil {
		return fmt.Errorf("host kubeconfig: %w", err)
	}
	res, err := enroll.Member(ctx, memberConfig, hostConfig, o)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "Secret %s/%s written; the token of ServiceAccount %s expires at %s\n",
		res.Secret.Namespace, res.Secret.Name, res.Secret.Annotations[enroll.ServiceAccountAnnotation], res.Expiration.UTC().Format(time.RFC3339))
	return err
}

// loadConfig loads a kubeconfig the way kubectl does. It is the operator's own kubeconfig, so
// exec plugins and file references are fine here.
func loadConfig(path, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		rules.ExplicitPath = path
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
}
