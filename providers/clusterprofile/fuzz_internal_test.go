// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
)

// The fuzz targets of the provider's parsers of what others write: the operator's access
// provider file, the access providers and extensions a cluster manager writes into a
// ClusterProfile's status, its KEP-2149 properties, and cluster names. The plugin package has
// the targets of the ExecCredential request and answer and of JWT expiry. Seeds are in
// testdata/fuzz/<FuzzName>; `go test -run=^$ -fuzz=^FuzzX$` runs one.

// fuzzMarker is a credential planted in the fuzzed input: no error may quote it.
const fuzzMarker = "fuzz-secret-3c9f1b7e"

// fuzzOperatorSecret is a credential in the operator's configuration (an env value of the
// plugin): no error may quote it either.
const fuzzOperatorSecret = "operator-secret-58a2d0c4"

// FuzzParseProviderFile: the operator's provider file never makes ParseProviderFile panic; what
// it accepts is valid, survives copyProviderConfig unchanged, and parses the same after encoding.
func FuzzParseProviderFile(f *testing.F) {
	for _, s := range []string{
		`{"providers": [{"name": "token", "execConfig": {"apiVersion": "client.authentication.k8s.io/v1", "command": "/plugins/token", "args": ["--namespace", "tokens"], "env": [{"name": "A", "value": "b"}], "provideClusterInfo": true}, "profileSourcedCLIArgsPolicy": "Append", "profileSourcedEnvVarsPolicy": "Replace"}]}`,
		`{"providers": [{"name": "a", "execConfig": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "x"}}, {"name": "a", "execConfig": {"apiVersion": "v1", "command": ""}}]}`,
		`{"providers": [{"name": "", "execConfig": null, "profileSourcedCLIArgsPolicy": "Sometimes"}]}`,
		`{"providers": []}`, `{"providers": null}`, `{}`, `[]`, ``, `{"providers": [{"name": "t", "typo": 1}]}`,
		`{"providers": [{"name": "t", "execConfig": {"apiVersion": "client.authentication.k8s.io/v1", "command": "c", "interactiveMode": "Never", "installHint": "h"}, "profileSourcedEnvVarsPolicy": "AppendIfNotExists"}]} trailing`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseProviderFile(data)
		if err != nil {
			return
		}
		if err := ValidateProviderConfig(cfg); err != nil {
			t.Fatalf("ParseProviderFile accepted an invalid configuration: %v", err)
		}
		if cp := copyProviderConfig(cfg); !reflect.DeepEqual(cp, cfg) {
			t.Fatalf("copyProviderConfig changed the configuration:\n%+v\n%+v", cp, cfg)
		}
		again, err := json.Marshal(cfg)
		if err != nil {
			t.Fatalf("encoding an accepted configuration: %v", err)
		}
		back, err := ParseProviderFile(again)
		if err != nil {
			t.Fatalf("an accepted configuration does not parse after encoding: %v\n%s", err, again)
		}
		if len(back.Providers) != len(cfg.Providers) {
			t.Fatalf("%d providers, %d after encoding", len(cfg.Providers), len(back.Providers))
		}
		for i := range cfg.Providers {
			if back.Providers[i].Name != cfg.Providers[i].Name || back.Providers[i].ExecConfig.Command != cfg.Providers[i].ExecConfig.Command {
				t.Fatalf("provider %d changed after encoding: %+v, %+v", i, cfg.Providers[i], back.Providers[i])
			}
		}
	})
}

// fuzzOperatorConfig is the operator's configuration of FuzzBuildAccessConfig: the provider
// "token" with the given policies, and "other".
func fuzzOperatorConfig(args access.ProfileSourcedCLIArgsPolicy, envs access.ProfileSourcedEnvVarsPolicy) *access.Config {
	return &access.Config{Providers: []access.Provider{
		{
			Name: "token",
			ExecConfig: &clientcmdapi.ExecConfig{
				APIVersion: "client.authentication.k8s.io/v1", Command: "/plugins/token", Args: []string{"--base"},
				Env:                []clientcmdapi.ExecEnvVar{{Name: "SECRET", Value: fuzzOperatorSecret}, {Name: "A", Value: "operator"}},
				ProvideClusterInfo: true,
			},
			ProfileSourcedCLIArgsPolicy: args, ProfileSourcedEnvVarsPolicy: envs,
		},
		{Name: "other", ExecConfig: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1beta1", Command: "/plugins/other"}},
	}}
}

// FuzzBuildAccessConfig: the access providers of a ClusterProfile's status (as the cluster
// manager writes them, JSON) never make buildAccessConfig panic; an accepted one talks to the
// profile's server, honors proxy, insecure and local files only as the profile and the policy
// say, has sorted env, is the same on every build, and leaves the operator's configuration
// alone; errors never quote the credentials of the profile's env or of the operator's.
func FuzzBuildAccessConfig(f *testing.F) {
	status := func(cluster string) []byte {
		return []byte(`{"accessProviders": [{"name": "token", "cluster": ` + cluster + `}]}`)
	}
	execExt := `{"name": "client.authentication.k8s.io/exec", "extension": {"clusterName": "east"}}`
	argsExt := `{"name": "clusterprofiles.multicluster.x-k8s.io/exec/additional-args", "extension": ["--x", "y"]}`
	envsExt := `{"name": "clusterprofiles.multicluster.x-k8s.io/exec/additional-envs", "extension": {"TOKEN": "` + fuzzMarker + `", "A": "profile"}}`
	for _, s := range [][]byte{
		status(`{"server": "https://east.example:6443", "certificate-authority-data": "Y2E=", "extensions": [` + execExt + `]}`),
		status(`{"server": "https://east.example:6443", "extensions": [` + execExt + `, ` + argsExt + `, ` + envsExt + `]}`),
		status(`{"server": "https://east.example:6443", "extensions": [{"name": "clusterprofiles.multicluster.x-k8s.io/exec/additional-envs", "extension": ["` + fuzzMarker + `"]}]}`),
		status(`{"server": "https://east.example:6443", "extensions": [{"name": "clusterprofiles.multicluster.x-k8s.io/exec/additional-args", "extension": {"a": "` + fuzzMarker + `"}}]}`),
		status(`{"server": "https://east.example:6443", "proxy-url": "socks5://proxy:1080", "tls-server-name": "east", "disable-compression": true}`),
		status(`{"server": "https://east.example:6443", "proxy-url": "ftp://proxy", "insecure-skip-tls-verify": true, "certificate-authority": "/etc/ca.crt"}`),
		status(`{"server": "", "proxy-url": "http://[::1"}`),
		status(`{"server": "https://east.example:6443", "insecure-skip-tls-verify": true, "certificate-authority-data": "Y2E="}`),
		[]byte(`{"credentialProviders": [{"name": "token", "cluster": {"server": "https://old.example"}}], "accessProviders": [{"name": "other", "cluster": {"server": "https://new.example"}}]}`),
		[]byte(`{"accessProviders": [{"name": "unknown", "cluster": {"server": "https://east.example"}}]}`),
		[]byte(`{"accessProviders": [{"name": "token", "cluster": {"server": "https://a", "extensions": [{"name": "client.authentication.k8s.io/exec", "extension": null}]}}]}`),
	} {
		f.Add(s, uint8(0), false, false)
		f.Add(s, uint8(7), true, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, policies uint8, allowInsecure, allowLocalFiles bool) {
		cp := &v1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "east"}}
		if err := json.Unmarshal(data, &cp.Status); err != nil {
			return
		}
		argsPolicy := []access.ProfileSourcedCLIArgsPolicy{"", access.ProfileSourcedCLIArgsPolicyIgnore, access.ProfileSourcedCLIArgsPolicyAppend}[policies%3]
		envsPolicy := []access.ProfileSourcedEnvVarsPolicy{"", access.ProfileSourcedEnvVarsPolicyIgnore,
			access.ProfileSourcedEnvVarsPolicyAppendIfNotExists, access.ProfileSourcedEnvVarsPolicyReplace}[policies/3%4]
		cfg := fuzzOperatorConfig(argsPolicy, envsPolicy)
		pristine := copyProviderConfig(cfg)
		policy := kubeconfig.Policy{AllowInsecure: allowInsecure, AllowLocalFiles: allowLocalFiles}
		profile := cp.DeepCopy()

		res, err := buildAccessConfig(cfg, cp, policy)
		if !reflect.DeepEqual(cfg, pristine) {
			t.Fatalf("buildAccessConfig changed the operator's configuration:\n%+v", cfg)
		}
		if !reflect.DeepEqual(cp, profile) {
			t.Fatal("buildAccessConfig changed the ClusterProfile")
		}
		if err != nil {
			msg := err.Error()
			if strings.Contains(msg, fuzzOperatorSecret) {
				t.Fatalf("the error quotes the operator's credential: %v", err)
			}
			if strings.Count(string(data), fuzzMarker) == 1 && strings.Contains(msg, fuzzMarker) && !strings.Contains(msg, `"`+fuzzMarker) {
				// The marker may be quoted as a name (of a provider, say), never as a value.
				t.Fatalf("the error quotes a credential of the profile: %v", err)
			}
			return
		}

		ap := accessProviders(cp)[res.provider]
		if ap == nil || !slices.ContainsFunc(cfg.Providers, func(p access.Provider) bool { return p.Name == res.provider }) {
			t.Fatalf("built through provider %q, which the profile or the operator does not list", res.provider)
		}
		c := res.cfg
		switch {
		case ap.Cluster.Server == "" || c.Host != ap.Cluster.Server:
			t.Fatalf("the config talks to %q, the profile says %q", c.Host, ap.Cluster.Server)
		case (c.Proxy != nil) != (ap.Cluster.ProxyURL != ""):
			t.Fatalf("proxy %q of the profile, Proxy set: %v", ap.Cluster.ProxyURL, c.Proxy != nil)
		case c.Insecure && (!allowInsecure || !ap.Cluster.InsecureSkipTLSVerify):
			t.Fatal("insecure without the profile asking and the policy allowing it")
		case c.Insecure && len(c.CAData) > 0:
			t.Fatal("insecure with a CA")
		case c.CAFile != "" && (!allowLocalFiles || c.CAFile != ap.Cluster.CertificateAuthority):
			t.Fatalf("CA file %q without the profile asking and the policy allowing it", c.CAFile)
		case c.ServerName != ap.Cluster.TLSServerName:
			t.Fatalf("TLS server name %q, the profile says %q", c.ServerName, ap.Cluster.TLSServerName)
		}
		if c.ExecProvider != nil && !slices.IsSortedFunc(c.ExecProvider.Env, func(a, b clientcmdapi.ExecEnvVar) int { return strings.Compare(a.Name, b.Name) }) {
			t.Fatalf("env is not sorted: %v", c.ExecProvider.Env)
		}
		again, err := buildAccessConfig(cfg, cp, policy)
		if err != nil {
			t.Fatalf("the second build fails: %v", err)
		}
		if !reflect.DeepEqual(again.cfg.ExecProvider, c.ExecProvider) || again.cfg.Host != c.Host || !reflect.DeepEqual(again.cfg.TLSClientConfig, c.TLSClientConfig) {
			t.Fatalf("two builds differ:\n%+v\n%+v", c.ExecProvider, again.cfg.ExecProvider)
		}
	})
}

// FuzzIdentity: the KEP-2149 properties of a ClusterProfile never make IdentityOf or Validate
// panic, and an identity Validate accepts is one KEP-2149 allows.
func FuzzIdentity(f *testing.F) {
	f.Add(PropertyClusterID, "kube-system-uid.east", PropertyClusterSet, "set")
	f.Add(PropertyClusterID, "", PropertyClusterSet, "")
	f.Add(PropertyClusterID, strings.Repeat("a", 129), "other", "x")
	f.Add(PropertyClusterID, "UPPER_case", PropertyClusterID, "east")
	f.Add(PropertyClusterSet, "set", PropertyClusterID, "a..b")
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2 string) {
		cp := &v1alpha1.ClusterProfile{Status: v1alpha1.ClusterProfileStatus{Properties: []v1alpha1.Property{{Name: n1, Value: v1}, {Name: n2, Value: v2}}}}
		id := IdentityOf(cp)
		if id.Validate() != nil {
			return
		}
		if id.ClusterSet == "" || len(id.ClusterID) > 128 || len(validation.IsDNS1123Subdomain(id.ClusterID)) > 0 {
			t.Fatalf("Validate accepted %+v", id)
		}
	})
}

// FuzzClusterKey: ClusterKey never panics, and gives back the namespace and name that
// ClusterName made the name of.
func FuzzClusterKey(f *testing.F) {
	for _, s := range []string{"fleet/east", "", "/", "a/", "/a", "a/b/c", "a//b", "east", "\xff/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		key, err := ClusterKey(multicluster.ClusterName(name))
		if err != nil {
			return
		}
		if key.Namespace == "" || key.Name == "" {
			t.Fatalf("ClusterKey(%q) = %v", name, key)
		}
		if got := string(ClusterName(key.Namespace, key.Name)); got != name {
			t.Fatalf("ClusterKey(%q) = %v, whose cluster name is %q", name, key, got)
		}
	})
}
