// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"

	"mcr.dev/core/kubeconfig"
)

// ProviderFileFlag is the name of the command-line flag that names the operator's access
// provider file, as KEP-5339 and sigs.k8s.io/cluster-inventory-api/pkg/access call it.
const ProviderFileFlag = "clusterprofile-provider-file"

// Reserved names of ClusterProfile access provider cluster extensions (KEP-5339).
const (
	// ExecExtension carries plugin-specific, non-secret data (for example {"clusterName":
	// "spoke-1"}) that client-go hands to the exec plugin as ExecCredential spec.cluster.config.
	ExecExtension = "client.authentication.k8s.io/exec"

	// AdditionalArgsExtension carries a string array appended to the plugin's arguments, only
	// when the operator's provider says profileSourcedCLIArgsPolicy: Append.
	AdditionalArgsExtension = "clusterprofiles.multicluster.x-k8s.io/exec/additional-args"

	// AdditionalEnvsExtension carries a string map merged into the plugin's environment, only
	// when the operator's provider says profileSourcedEnvVarsPolicy: AppendIfNotExists or
	// Replace.
	AdditionalEnvsExtension = "clusterprofiles.multicluster.x-k8s.io/exec/additional-envs"
)

// Supported ExecCredential API versions of exec plugins.
var execAPIVersions = []string{"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"}

// RegisterProviderFileFlag registers the -clusterprofile-provider-file flag on fs
// (flag.CommandLine when fs is nil) and returns a function that, once fs has been parsed, loads
// and validates the file the flag names with LoadProviderFile. The function returns nil and no
// error when the flag was not given: the access-provider strategy is then off.
//
// Unlike access.SetupProviderFileFlag, the flag has no default file name, so that a missing file
// is an explicit choice of the operator rather than a silent fallback.
func RegisterProviderFileFlag(fs *flag.FlagSet) func() (*access.Config, error) {
	if fs == nil {
		fs = flag.CommandLine
	}
	path := fs.String(ProviderFileFlag, "", "Path to the JSON file of KEP-5339 access providers (exec credential plugins) used to reach the clusters of ClusterProfiles.")
	return func() (*access.Config, error) {
		if *path == "" {
			return nil, nil
		}
		return LoadProviderFile(*path)
	}
}

// LoadProviderFile reads the operator's access provider file, a JSON document of the form
//
//	{"providers": [{"name": "token", "execConfig": {"apiVersion": "client.authentication.k8s.io/v1",
//	  "command": "/plugins/token", "args": ["--namespace", "tokens"], "provideClusterInfo": true},
//	  "profileSourcedCLIArgsPolicy": "Ignore", "profileSourcedEnvVarsPolicy": "Ignore"}]}
//
// and validates it with ValidateProviderConfig. Unlike access.NewFromFile, unknown fields are
// errors (a misspelled policy would otherwise silently read as Ignore) and policies are checked
// at load time, not when the first ClusterProfile happens to use the extension.
func LoadProviderFile(path string) (*access.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the access provider file: %w", err)
	}
	return ParseProviderFile(data)
}

// ParseProviderFile is LoadProviderFile for the content of the file.
func ParseProviderFile(data []byte) (*access.Config, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	cfg := &access.Config{}
	if err := dec.Decode(cfg); err != nil {
		return nil, fmt.Errorf("decoding the access provider file (JSON): %w", err)
	}
	if err := ValidateProviderConfig(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// ValidateProviderConfig checks an access provider configuration: every provider has a unique,
// non-empty name and an exec config with a command and a supported apiVersion
// (client.authentication.k8s.io/v1 or v1beta1), and both policies are known values. New calls
// it on Options.AccessProviders.
func ValidateProviderConfig(cfg *access.Config) error {
	if cfg == nil {
		return errors.New("access provider configuration is nil")
	}
	var errs []error
	seen := map[string]bool{}
	for i, p := range cfg.Providers {
		where := fmt.Sprintf("providers[%d]", i)
		if p.Name == "" {
			errs = append(errs, fmt.Errorf("%s: name is empty", where))
		} else {
			where = fmt.Sprintf("providers[%d] (%q)", i, p.Name)
			if seen[p.Name] {
				errs = append(errs, fmt.Errorf("%s: duplicate name", where))
			}
			seen[p.Name] = true
		}
		switch {
		case p.ExecConfig == nil:
			errs = append(errs, fmt.Errorf("%s: execConfig is missing", where))
		case p.ExecConfig.Command == "":
			errs = append(errs, fmt.Errorf("%s: execConfig.command is empty", where))
		case !slices.Contains(execAPIVersions, p.ExecConfig.APIVersion):
			errs = append(errs, fmt.Errorf("%s: execConfig.apiVersion %q is not one of %v", where, p.ExecConfig.APIVersion, execAPIVersions))
		}
		switch p.ProfileSourcedCLIArgsPolicy {
		case "", access.ProfileSourcedCLIArgsPolicyIgnore, access.ProfileSourcedCLIArgsPolicyAppend:
		default:
			errs = append(errs, fmt.Errorf("%s: unknown profileSourcedCLIArgsPolicy %q (want %q or %q)", where,
				p.ProfileSourcedCLIArgsPolicy, access.ProfileSourcedCLIArgsPolicyIgnore, access.ProfileSourcedCLIArgsPolicyAppend))
		}
		switch p.ProfileSourcedEnvVarsPolicy {
		case "", access.ProfileSourcedEnvVarsPolicyIgnore, access.ProfileSourcedEnvVarsPolicyAppendIfNotExists, access.ProfileSourcedEnvVarsPolicyReplace:
		default:
			errs = append(errs, fmt.Errorf("%s: unknown profileSourcedEnvVarsPolicy %q (want %q, %q or %q)", where,
				p.ProfileSourcedEnvVarsPolicy, access.ProfileSourcedEnvVarsPolicyIgnore,
				access.ProfileSourcedEnvVarsPolicyAppendIfNotExists, access.ProfileSourcedEnvVarsPolicyReplace))
		}
	}
	if len(cfg.Providers) == 0 {
		errs = append(errs, errors.New("no providers"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid access provider configuration: %w", err)
	}
	return nil
}

// copyProviderConfig returns a deep copy of cfg, so that nothing the caller or pkg/access does
// to one copy reaches another.
func copyProviderConfig(cfg *access.Config) *access.Config {
	out := &access.Config{Providers: make([]access.Provider, len(cfg.Providers))}
	for i, p := range cfg.Providers {
		out.Providers[i] = p
		out.Providers[i].ExecConfig = p.ExecConfig.DeepCopy()
	}
	return out
}

// errNoAccessProvider marks a ClusterProfile that lists none of the operator's access providers.
var errNoAccessProvider = errors.New("no access provider of the provider file matches the ClusterProfile")

// accessProviders returns the access providers a ClusterProfile lists, by name: the deprecated
// status.credentialProviders overlaid by status.accessProviders, which win on a name clash (as
// pkg/access does).
func accessProviders(cp *v1alpha1.ClusterProfile) map[string]*v1alpha1.AccessProvider {
	byName := map[string]*v1alpha1.AccessProvider{}
	for i := range cp.Status.CredentialProviders {
		byName[cp.Status.CredentialProviders[i].Name] = &cp.Status.CredentialProviders[i]
	}
	for i := range cp.Status.AccessProviders {
		byName[cp.Status.AccessProviders[i].Name] = &cp.Status.AccessProviders[i]
	}
	return byName
}

// accessResult is a rest.Config built from a ClusterProfile through an access provider.
type accessResult struct {
	cfg *rest.Config
	// provider is the name of the access provider used.
	provider string
	// deprecated is true when the provider came from status.credentialProviders.
	deprecated bool
}

// buildAccessConfig builds the rest.Config of a ClusterProfile from the first provider of cfg
// (in file order) that the profile lists, through access.Config.BuildConfigFromCP, and then
// repairs what that function gets wrong:
//
//   - it appends profile-sourced args to, and replaces the env of, the ExecConfig of the loaded
//     file in place, so every build would see the previous ones: each build here gets a
//     fresh deep copy of the one provider it uses, and the operator's configuration is never
//     touched;
//   - it merges env through a map, so the order of env changes from build to build: env is
//     sorted by name (stable, so duplicates keep their order), which makes the result, and
//     its hash, deterministic;
//   - it always sets a Proxy function, even without proxy-url: Proxy is nil unless the profile
//     names a proxy, which is then parsed once, and errors are reported instead of failing
//     every request;
//   - it drops tls-server-name and disable-compression: both are honored; and it ignores
//     insecure-skip-tls-verify and certificate-authority (a file path): both are refused
//     unless policy allows them (AllowInsecure, AllowLocalFiles), and then honored;
//   - it logs a klog warning on every build for status.credentialProviders: the deprecated
//     field is resolved here and reported once per profile by the caller.
func buildAccessConfig(cfg *access.Config, cp *v1alpha1.ClusterProfile, policy kubeconfig.Policy) (*accessResult, error) {
	listed := accessProviders(cp)
	var chosen *access.Provider
	var ap *v1alpha1.AccessProvider
	for i := range cfg.Providers {
		if a, ok := listed[cfg.Providers[i].Name]; ok {
			chosen, ap = &cfg.Providers[i], a
			break
		}
	}
	if chosen == nil {
		names := make([]string, 0, len(listed))
		for name := range listed {
			names = append(names, name)
		}
		slices.Sort(names)
		configured := make([]string, 0, len(cfg.Providers))
		for _, p := range cfg.Providers {
			configured = append(configured, p.Name)
		}
		return nil, fmt.Errorf("%w: the profile lists %q, the provider file configures %q", errNoAccessProvider, names, configured)
	}
	usedDeprecated := !slices.ContainsFunc(cp.Status.AccessProviders, func(a v1alpha1.AccessProvider) bool { return a.Name == chosen.Name })

	// A profile reduced to the chosen provider, and a configuration of a private copy of it.
	one := &v1alpha1.ClusterProfile{ObjectMeta: cp.ObjectMeta, Spec: cp.Spec}
	one.Status.AccessProviders = []v1alpha1.AccessProvider{*ap.DeepCopy()}
	private := *chosen
	private.ExecConfig = chosen.ExecConfig.DeepCopy()
	if err := checkExtensions(chosen, ap); err != nil {
		return nil, err
	}
	built, err := access.New([]access.Provider{private}).BuildConfigFromCP(one)
	if err != nil {
		// Not wrapped: pkg/access quotes the YAML decoder, whose messages quote values.
		return nil, fmt.Errorf("access provider %q: the ClusterProfile's cluster data cannot be used", chosen.Name)
	}

	cluster := ap.Cluster
	if err := checkProfileData(chosen, ap, built, policy); err != nil {
		return nil, err
	}
	built.Proxy = nil
	if cluster.ProxyURL != "" {
		// checkProfileData made sure it parses.
		u, err := url.Parse(cluster.ProxyURL)
		if err != nil {
			return nil, fmt.Errorf("access provider %q: cluster.proxy-url cannot be parsed", chosen.Name)
		}
		built.Proxy = http.ProxyURL(u)
	}
	built.ServerName = cluster.TLSServerName
	built.DisableCompression = cluster.DisableCompression
	if cluster.InsecureSkipTLSVerify {
		built.Insecure = true
		built.CAData = nil // client-go refuses a CA together with insecure
	}
	if cluster.CertificateAuthority != "" && len(built.CAData) == 0 && !built.Insecure {
		built.CAFile = cluster.CertificateAuthority
	}
	if built.ExecProvider != nil {
		slices.SortStableFunc(built.ExecProvider.Env, func(a, b clientcmdapi.ExecEnvVar) int { return strings.Compare(a.Name, b.Name) })
	}
	return &accessResult{cfg: built, provider: chosen.Name, deprecated: usedDeprecated}, nil
}

// checkExtensions decodes the profile-sourced args and env extensions that chosen's policies
// let pkg/access use, as pkg/access decodes them, so that a malformed one is reported without
// the decoder's message, which quotes (the start of) the values: they are handed to the plugin
// and may be credentials.
func checkExtensions(chosen *access.Provider, ap *v1alpha1.AccessProvider) error {
	for _, ext := range ap.Cluster.Extensions {
		var err error
		var want string
		switch {
		case ext.Name == AdditionalArgsExtension && chosen.ProfileSourcedCLIArgsPolicy == access.ProfileSourcedCLIArgsPolicyAppend:
			var args []string
			err, want = yaml.Unmarshal(ext.Extension.Raw, &args), "a string array"
		case ext.Name == AdditionalEnvsExtension && chosen.ProfileSourcedEnvVarsPolicy != "" &&
			chosen.ProfileSourcedEnvVarsPolicy != access.ProfileSourcedEnvVarsPolicyIgnore:
			var env map[string]string
			err, want = yaml.Unmarshal(ext.Extension.Raw, &env), "a map of strings"
		}
		if err != nil {
			return fmt.Errorf("access provider %q: extension %s is not %s", chosen.Name, ext.Name, want)
		}
	}
	return nil
}

// profileDataUser names the user of the kubeconfig checkProfileData builds, as its errors
// quote it.
const profileDataUser = "profile-sourced exec env"

// checkProfileData applies policy to what the ClusterProfile, not the operator, put into built
// (the config pkg/access built from the access provider ap of chosen), exactly as
// kubeconfig.Check applies it to a kubeconfig: the server (https, no user info, query or
// fragment), proxy-url (AllowProxyURL), insecure-skip-tls-verify (AllowInsecure),
// certificate-authority (AllowLocalFiles) and the exec env the profile's additional-envs
// extension set (DefaultExecEnv and AllowExecEnv). The operator's exec plugin, its args and env
// are as trusted as the controller and are not checked. It runs before the plugin does, which
// is handed the server. Errors name fields, never values.
func checkProfileData(chosen *access.Provider, ap *v1alpha1.AccessProvider, built *rest.Config, policy kubeconfig.Policy) error {
	cluster := ap.Cluster
	if cluster.Server == "" {
		return fmt.Errorf("access provider %q: cluster.server is empty", chosen.Name)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[chosen.Name] = &clientcmdapi.Cluster{
		Server:                   cluster.Server,
		ProxyURL:                 cluster.ProxyURL,
		InsecureSkipTLSVerify:    cluster.InsecureSkipTLSVerify,
		CertificateAuthority:     cluster.CertificateAuthority,
		CertificateAuthorityData: cluster.CertificateAuthorityData,
	}
	kctx := &clientcmdapi.Context{Cluster: chosen.Name}
	if env := profileSourcedEnv(chosen.ExecConfig, built.ExecProvider); len(env) > 0 {
		// A bare command name: only the env is the profile's.
		cfg.AuthInfos[profileDataUser] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "plugin", Env: env}}
		kctx.AuthInfo = profileDataUser
	}
	cfg.Contexts["profile"] = kctx
	policy.AllowExec = true
	if err := kubeconfig.Check(cfg, "profile", policy); err != nil {
		return fmt.Errorf("access provider %q: the ClusterProfile's cluster data: %w", chosen.Name, err)
	}
	return nil
}

// profileSourcedEnv returns the variables of the built exec config that the operator's exec
// config does not set to the same value: those the profile set.
func profileSourcedEnv(operator, built *clientcmdapi.ExecConfig) []clientcmdapi.ExecEnvVar {
	if built == nil {
		return nil
	}
	own := map[string]string{}
	if operator != nil {
		for _, v := range operator.Env {
			own[v.Name] = v.Value
		}
	}
	var out []clientcmdapi.ExecEnvVar
	for _, v := range built.Env {
		if value, ok := own[v.Name]; !ok || value != v.Value {
			out = append(out, v)
		}
	}
	slices.SortStableFunc(out, func(a, b clientcmdapi.ExecEnvVar) int { return strings.Compare(a.Name, b.Name) })
	return out
}
