// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"

	"mcr.dev/core/clusters"
	"mcr.dev/core/kubeconfig"
)

func operatorConfig(argsPolicy access.ProfileSourcedCLIArgsPolicy, envPolicy access.ProfileSourcedEnvVarsPolicy) *access.Config {
	return &access.Config{Providers: []access.Provider{{
		Name: "token",
		ExecConfig: &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1", Command: "/plugins/token",
			Args:               []string{"--base"},
			Env:                []clientcmdapi.ExecEnvVar{{Name: "B", Value: "operator"}, {Name: "A", Value: "operator"}},
			ProvideClusterInfo: true,
		},
		ProfileSourcedCLIArgsPolicy: argsPolicy,
		ProfileSourcedEnvVarsPolicy: envPolicy,
	}}}
}

func ext(name, raw string) clientcmdv1.NamedExtension {
	return clientcmdv1.NamedExtension{Name: name, Extension: runtime.RawExtension{Raw: []byte(raw)}}
}

func testProfile(name string, exts ...clientcmdv1.NamedExtension) *v1alpha1.ClusterProfile {
	return &v1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: name},
		Status: v1alpha1.ClusterProfileStatus{AccessProviders: []v1alpha1.AccessProvider{{
			Name: "token",
			Cluster: clientcmdv1.Cluster{
				Server: "https://" + name + ".example:6443", CertificateAuthorityData: []byte("ca-" + name),
				Extensions: append([]clientcmdv1.NamedExtension{ext(ExecExtension, `{"clusterName":"`+name+`"}`)}, exts...),
			},
		}}},
	}
}

func mustBuild(t *testing.T, cfg *access.Config, cp *v1alpha1.ClusterProfile) *accessResult {
	t.Helper()
	res, err := buildAccessConfig(cfg, cp, permissive)
	if err != nil {
		t.Fatalf("buildAccessConfig(%s): %v", cp.Name, err)
	}
	return res
}

// permissive is the policy of mustBuild: it lets profiles set any exec env and a proxy-url, so
// that the tests using it see how the config is built (TestProfileDataFollowsThePolicy covers
// the policy).
var permissive = kubeconfig.Policy{AllowExecEnv: "*", AllowProxyURL: true}

// TestBuildNeverMutatesTheOperatorsExecConfig builds configs for two profiles again and again
// with the Append policy: pkg/access would append each profile's args to the shared ExecConfig
// in place, so args would accumulate across builds and leak between profiles.
func TestBuildNeverMutatesTheOperatorsExecConfig(t *testing.T) {
	cfg := operatorConfig(access.ProfileSourcedCLIArgsPolicyAppend, access.ProfileSourcedEnvVarsPolicyReplace)
	pristine := cfg.Providers[0].ExecConfig.DeepCopy()
	a := testProfile("a", ext(AdditionalArgsExtension, `["--for-a"]`), ext(AdditionalEnvsExtension, `{"A": "profile-a"}`))
	b := testProfile("b", ext(AdditionalArgsExtension, `["--for-b"]`))
	for range 3 {
		for _, tc := range []struct {
			cp   *v1alpha1.ClusterProfile
			args []string
		}{{a, []string{"--base", "--for-a"}}, {b, []string{"--base", "--for-b"}}} {
			res := mustBuild(t, cfg, tc.cp)
			if got := res.cfg.ExecProvider.Args; !slices.Equal(got, tc.args) {
				t.Fatalf("profile %s: args %q, want %q", tc.cp.Name, got, tc.args)
			}
			// The result is the caller's own: changing it changes nothing else.
			res.cfg.ExecProvider.Args[0] = "--scribbled"
			res.cfg.ExecProvider.Env = append(res.cfg.ExecProvider.Env, clientcmdapi.ExecEnvVar{Name: "X"})
		}
	}
	if got := cfg.Providers[0].ExecConfig; got.Command != pristine.Command || !slices.Equal(got.Args, pristine.Args) || !slices.Equal(got.Env, pristine.Env) {
		t.Errorf("the operator's ExecConfig changed: %+v, want %+v", got, pristine)
	}
}

func TestProfileSourcedArgsAndEnvIgnoredByDefault(t *testing.T) {
	for _, policies := range []struct {
		args access.ProfileSourcedCLIArgsPolicy
		env  access.ProfileSourcedEnvVarsPolicy
	}{{"", ""}, {access.ProfileSourcedCLIArgsPolicyIgnore, access.ProfileSourcedEnvVarsPolicyIgnore}} {
		cp := testProfile("a", ext(AdditionalArgsExtension, `["--evil"]`), ext(AdditionalEnvsExtension, `{"A": "evil", "LD_PRELOAD": "/tmp/x.so"}`))
		res := mustBuild(t, operatorConfig(policies.args, policies.env), cp)
		if got := res.cfg.ExecProvider.Args; !slices.Equal(got, []string{"--base"}) {
			t.Errorf("policies %q/%q: args %q, want only the operator's", policies.args, policies.env, got)
		}
		want := []clientcmdapi.ExecEnvVar{{Name: "A", Value: "operator"}, {Name: "B", Value: "operator"}}
		if got := res.cfg.ExecProvider.Env; !slices.Equal(got, want) {
			t.Errorf("policies %q/%q: env %v, want %v", policies.args, policies.env, got, want)
		}
	}
}

func TestEnvPolicies(t *testing.T) {
	cp := testProfile("a", ext(AdditionalEnvsExtension, `{"A": "profile", "C": "profile"}`))
	for policy, want := range map[access.ProfileSourcedEnvVarsPolicy][]clientcmdapi.ExecEnvVar{
		access.ProfileSourcedEnvVarsPolicyAppendIfNotExists: {{Name: "A", Value: "operator"}, {Name: "B", Value: "operator"}, {Name: "C", Value: "profile"}},
		access.ProfileSourcedEnvVarsPolicyReplace:           {{Name: "A", Value: "profile"}, {Name: "B", Value: "operator"}, {Name: "C", Value: "profile"}},
	} {
		cfg := operatorConfig("", policy)
		first := mustBuild(t, cfg, cp)
		if got := first.cfg.ExecProvider.Env; !slices.Equal(got, want) {
			t.Errorf("%s: env %v, want %v (sorted)", policy, got, want)
		}
		// pkg/access merges env through a map; the result, which the engine compares with
		// the engaged config, must not depend on map order.
		for range 20 {
			if !clusters.EqualConfigs(mustBuild(t, cfg, cp).cfg, first.cfg) {
				t.Fatalf("%s: identical builds are not equal configs", policy)
			}
		}
	}
}

func TestAccessProviderChoice(t *testing.T) {
	cfg := &access.Config{Providers: []access.Provider{
		{Name: "first", ExecConfig: &clientcmdapi.ExecConfig{Command: "first", APIVersion: "client.authentication.k8s.io/v1"}},
		{Name: "second", ExecConfig: &clientcmdapi.ExecConfig{Command: "second", APIVersion: "client.authentication.k8s.io/v1"}},
	}}
	entry := func(name, server string) v1alpha1.AccessProvider {
		return v1alpha1.AccessProvider{Name: name, Cluster: clientcmdv1.Cluster{Server: server}}
	}
	cp := &v1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	// The file's order wins over the profile's.
	cp.Status.AccessProviders = []v1alpha1.AccessProvider{entry("second", "https://s"), entry("first", "https://f")}
	if res := mustBuild(t, cfg, cp); res.provider != "first" || res.cfg.Host != "https://f" || res.deprecated {
		t.Errorf("chose %q at %s (deprecated %t), want first at https://f", res.provider, res.cfg.Host, res.deprecated)
	}
	// accessProviders win over credentialProviders on a name clash.
	cp.Status.AccessProviders = []v1alpha1.AccessProvider{entry("second", "https://new")}
	cp.Status.CredentialProviders = []v1alpha1.AccessProvider{entry("second", "https://old")}
	if res := mustBuild(t, cfg, cp); res.provider != "second" || res.cfg.Host != "https://new" || res.deprecated {
		t.Errorf("chose %q at %s (deprecated %t), want second at https://new", res.provider, res.cfg.Host, res.deprecated)
	}
	// The deprecated field alone still works, and says so.
	cp.Status.AccessProviders = nil
	if res := mustBuild(t, cfg, cp); res.cfg.Host != "https://old" || !res.deprecated {
		t.Errorf("deprecated field: host %s, deprecated %t", res.cfg.Host, res.deprecated)
	}
	// Nothing matches.
	cp.Status.CredentialProviders = []v1alpha1.AccessProvider{entry("vendor-x", "https://x")}
	if _, err := buildAccessConfig(cfg, cp, kubeconfig.Policy{}); !errors.Is(err, errNoAccessProvider) || !strings.Contains(err.Error(), "vendor-x") {
		t.Errorf("no match: %v, want errNoAccessProvider naming vendor-x", err)
	}
}

func TestClusterFieldsPkgAccessDrops(t *testing.T) {
	cfg := operatorConfig("", "")
	cp := testProfile("a")
	res := mustBuild(t, cfg, cp)
	if res.cfg.Proxy != nil {
		t.Error("Proxy set without proxy-url")
	}
	if res.cfg.ExecProvider.InteractiveMode != clientcmdapi.NeverExecInteractiveMode {
		t.Errorf("interactive mode %q, want Never", res.cfg.ExecProvider.InteractiveMode)
	}
	var execCfg map[string]string
	raw, err := json.Marshal(res.cfg.ExecProvider.Config)
	if err != nil || json.Unmarshal(raw, &execCfg) != nil || execCfg["clusterName"] != "a" {
		t.Errorf("exec cluster config = %s (%v), want the profile's extension", raw, err)
	}

	cl := &cp.Status.AccessProviders[0].Cluster
	cl.ProxyURL, cl.TLSServerName, cl.DisableCompression = "http://proxy.example:3128", "api.internal", true
	res, err = buildAccessConfig(cfg, cp, kubeconfig.Policy{AllowProxyURL: true})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, res.cfg.Host, nil)
	if u, err := res.cfg.Proxy(req); err != nil || u.String() != "http://proxy.example:3128" {
		t.Errorf("proxy = %v, %v", u, err)
	}
	if res.cfg.ServerName != "api.internal" || !res.cfg.DisableCompression {
		t.Errorf("tls-server-name %q, disable-compression %t: not honored", res.cfg.ServerName, res.cfg.DisableCompression)
	}

	cl.ProxyURL = "ftp://nope"
	if _, err := buildAccessConfig(cfg, cp, kubeconfig.Policy{AllowProxyURL: true}); err == nil {
		t.Error("a proxy-url with an unsupported scheme was accepted")
	}
	cl.ProxyURL = ""
	cl.InsecureSkipTLSVerify = true
	if _, err := buildAccessConfig(cfg, cp, kubeconfig.Policy{}); !errors.Is(err, kubeconfig.ErrInsecureTLS) || kubeconfig.Reason(err) != kubeconfig.ReasonInsecureTLS {
		t.Errorf("insecure-skip-tls-verify: %v, want ErrInsecureTLS", err)
	}
	if res, err := buildAccessConfig(cfg, cp, kubeconfig.Policy{AllowInsecure: true}); err != nil || !res.cfg.Insecure || len(res.cfg.CAData) != 0 {
		t.Errorf("insecure allowed by policy: %v", err)
	}
	cl.InsecureSkipTLSVerify = false
	cl.CertificateAuthority = "/etc/ca.pem"
	if _, err := buildAccessConfig(cfg, cp, kubeconfig.Policy{}); !errors.Is(err, kubeconfig.ErrLocalFile) {
		t.Errorf("certificate-authority path: %v, want ErrLocalFile", err)
	}
}

// TestAccessConfigFollowsCredentialContentOnly: the config built for a profile, which the engine
// compares with the engaged one (clusters.EqualConfigs), changes with what decides where and as
// whom the cluster is reached, and with nothing else.
func TestAccessConfigFollowsCredentialContentOnly(t *testing.T) {
	cfg := operatorConfig(access.ProfileSourcedCLIArgsPolicyAppend, "")
	base := testProfile("a")
	built := mustBuild(t, cfg, base).cfg

	same := base.DeepCopy()
	same.Status.Conditions = []metav1.Condition{{Type: "ControlPlaneHealthy", Status: metav1.ConditionFalse}}
	same.Status.Properties = []v1alpha1.Property{{Name: PropertyClusterID, Value: "x"}}
	same.Status.Version.Kubernetes = "1.36.0"
	same.Labels = map[string]string{"x": "y"}
	same.Status.AccessProviders = append(same.Status.AccessProviders, v1alpha1.AccessProvider{Name: "vendor-x"})
	if !clusters.EqualConfigs(mustBuild(t, cfg, same).cfg, built) {
		t.Error("config changed with conditions, properties, version, labels or an unused provider")
	}

	for what, change := range map[string]func(*clientcmdv1.Cluster){
		"server":      func(c *clientcmdv1.Cluster) { c.Server = "https://elsewhere:6443" },
		"CA":          func(c *clientcmdv1.Cluster) { c.CertificateAuthorityData = []byte("other-ca") },
		"exec config": func(c *clientcmdv1.Cluster) { c.Extensions[0] = ext(ExecExtension, `{"clusterName":"b"}`) },
		"args": func(c *clientcmdv1.Cluster) {
			c.Extensions = append(c.Extensions, ext(AdditionalArgsExtension, `["--x"]`))
		},
		"proxy":       func(c *clientcmdv1.Cluster) { c.ProxyURL = "http://proxy:1" },
		"server name": func(c *clientcmdv1.Cluster) { c.TLSServerName = "n" },
	} {
		changed := base.DeepCopy()
		change(&changed.Status.AccessProviders[0].Cluster)
		if clusters.EqualConfigs(mustBuild(t, cfg, changed).cfg, built) {
			t.Errorf("config unchanged when the %s changed", what)
		}
	}
}

// TestProfileDataFollowsThePolicy: what a ClusterProfile puts into the config (server,
// proxy-url, exec env through the additional-envs extension) is held to Options.Policy as a
// kubeconfig is, before the plugin runs; the operator's own exec config is not. Errors name the
// field, never the value.
func TestProfileDataFollowsThePolicy(t *testing.T) {
	const secret = "MkProfileDataS3cr3t"
	cfg := operatorConfig("", access.ProfileSourcedEnvVarsPolicyReplace)
	// The operator's env may set anything: the operator is as trusted as the controller.
	cfg.Providers[0].ExecConfig.Env = append(cfg.Providers[0].ExecConfig.Env, clientcmdapi.ExecEnvVar{Name: "LD_LIBRARY_PATH", Value: "/opt/plugin"})
	for _, tc := range []struct {
		what   string
		change func(*clientcmdv1.Cluster)
		policy kubeconfig.Policy
		want   error // nil: accepted
	}{
		{"proxy-url without AllowProxyURL", func(c *clientcmdv1.Cluster) { c.ProxyURL = "http://user:" + secret + "@proxy.example:3128" }, kubeconfig.Policy{}, kubeconfig.ErrProxyURL},
		{"proxy-url with its password", func(c *clientcmdv1.Cluster) { c.ProxyURL = "http://user:" + secret + "@proxy.example:3128" }, kubeconfig.Policy{AllowProxyURL: true}, nil},
		{"proxy-url with a query", func(c *clientcmdv1.Cluster) { c.ProxyURL = "http://proxy.example:3128/?token=" + secret }, kubeconfig.Policy{AllowProxyURL: true}, kubeconfig.ErrURLData},
		{"server user info", func(c *clientcmdv1.Cluster) { c.Server = "https://admin:" + secret + "@a.example:6443" }, kubeconfig.Policy{}, kubeconfig.ErrURLData},
		{"server query", func(c *clientcmdv1.Cluster) { c.Server = "https://a.example:6443/?access_token=" + secret }, kubeconfig.Policy{}, kubeconfig.ErrURLData},
		{"plain http server", func(c *clientcmdv1.Cluster) { c.Server = "http://a.example:6443" }, kubeconfig.Policy{}, kubeconfig.ErrPlainHTTP},
		{"plain http server allowed", func(c *clientcmdv1.Cluster) { c.Server = "http://a.example:6443" }, kubeconfig.Policy{AllowPlainHTTP: true}, nil},
		{"env outside the allow-list", func(c *clientcmdv1.Cluster) {
			c.Extensions = append(c.Extensions, ext(AdditionalEnvsExtension, `{"LD_PRELOAD": "/tmp/`+secret+`.so"}`))
		}, kubeconfig.Policy{}, kubeconfig.ErrExecEnv},
		{"env the profile replaces", func(c *clientcmdv1.Cluster) {
			c.Extensions = append(c.Extensions, ext(AdditionalEnvsExtension, `{"LD_LIBRARY_PATH": "/tmp/`+secret+`"}`))
		}, kubeconfig.Policy{}, kubeconfig.ErrExecEnv},
		{"env in AllowExecEnv", func(c *clientcmdv1.Cluster) {
			c.Extensions = append(c.Extensions, ext(AdditionalEnvsExtension, `{"TOKEN_KEY": "`+secret+`"}`))
		}, kubeconfig.Policy{AllowExecEnv: "TOKEN_*"}, nil},
		{"env of DefaultExecEnv", func(c *clientcmdv1.Cluster) {
			c.Extensions = append(c.Extensions, ext(AdditionalEnvsExtension, `{"AWS_REGION": "eu-west-1"}`))
		}, kubeconfig.Policy{}, nil},
		{"env the operator sets to the same value", func(c *clientcmdv1.Cluster) {
			c.Extensions = append(c.Extensions, ext(AdditionalEnvsExtension, `{"LD_LIBRARY_PATH": "/opt/plugin"}`))
		}, kubeconfig.Policy{}, nil},
		{"env extension that is not a map", func(c *clientcmdv1.Cluster) {
			c.Extensions = append(c.Extensions, ext(AdditionalEnvsExtension, `"`+secret+`"`))
		}, kubeconfig.Policy{AllowExecEnv: "*"}, errAny},
		{"env extension with a list", func(c *clientcmdv1.Cluster) {
			c.Extensions = append(c.Extensions, ext(AdditionalEnvsExtension, `["`+secret+`"]`))
		}, kubeconfig.Policy{AllowExecEnv: "*"}, errAny},
	} {
		t.Run(tc.what, func(t *testing.T) {
			cp := testProfile("a")
			tc.change(&cp.Status.AccessProviders[0].Cluster)
			res, err := buildAccessConfig(cfg, cp, tc.policy)
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == nil:
				if res.cfg == nil {
					t.Fatal("no config")
				}
				return
			case err == nil:
				t.Fatalf("accepted, want %v", tc.want)
			case tc.want != errAny && !errors.Is(err, tc.want):
				t.Errorf("error %v, want %v", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), secret[:7]) {
				t.Errorf("the error quotes the value: %v", err)
			}
		})
	}
}

// errAny stands for any error in TestProfileDataFollowsThePolicy.
var errAny = errors.New("any error")
