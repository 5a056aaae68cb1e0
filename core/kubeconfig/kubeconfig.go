// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Policy says which potentially dangerous kubeconfig features Load accepts. The zero value is
// the hardened default: every feature below is rejected. Enable a field only for kubeconfigs
// whose authors are as trusted as the controller itself.
//
// Whatever the Policy, a member's server must be an https:// URL (http:// with
// AllowPlainHTTP) without user info, query or fragment. No field allows those three: user info
// is basic-auth credentials in the one value that client-go and net/http quote in their errors
// and log lines (the user entry's username and password carry the same credentials without
// that); client-go drops the query and fragment from every request, so they can hold nothing
// the member needs, only data that leaks.
//
// Policy is comparable (AllowExecEnv is a string, not a slice), so that a provider can tell
// the default apart with policy == (Policy{}).
type Policy struct {
	// AllowExec accepts exec credential plugins (users[].user.exec), which run a program in the
	// controller's process environment every time credentials are needed. With AllowLocalFiles
	// unset, the plugin command must be a bare name looked up in $PATH, not a path. The
	// plugin's env may set only the variables of DefaultExecEnv and AllowExecEnv.
	// Default: false.
	AllowExec bool

	// AllowExecEnv names the environment variables, beyond DefaultExecEnv, that an exec
	// plugin's env may set when AllowExec is set: names separated by commas, a name ending in
	// "*" for every name with that prefix ("AZURE_*"), or "*" for any variable. A listed name
	// is accepted even if it is a loader or runtime variable (LD_PRELOAD, PATH, ...), which an
	// untrusted kubeconfig must never set: list only what the plugins you trust need.
	// Default: "" (DefaultExecEnv only).
	AllowExecEnv string

	// AllowAuthProvider accepts auth-provider plugins (users[].user.auth-provider), code compiled
	// into the controller that is configured by the kubeconfig. With AllowLocalFiles unset, the
	// plugin configuration must not name files (keys ending in -path or -file, or
	// certificate-authority keys without the -data suffix). Default: false.
	AllowAuthProvider bool

	// AllowLocalFiles accepts references to files on the controller's filesystem:
	// certificate-authority, client-certificate, client-key, tokenFile, exec commands given as
	// paths and file paths in auth-provider configuration. Without it only inline data
	// (certificate-authority-data, client-certificate-data, client-key-data, token) is accepted.
	// Default: false.
	AllowLocalFiles bool

	// AllowInsecure accepts insecure-skip-tls-verify, which makes the client trust any server
	// certificate and so hand its credentials to whoever answers at the server address.
	// Default: false.
	AllowInsecure bool

	// AllowPlainHTTP accepts servers reached over plain text: an http:// server, or a server
	// given as host:port that client-go reaches over http because the config has neither a CA,
	// a client certificate nor insecure-skip-tls-verify. Requests, tokens and passwords then
	// cross the network unencrypted and unauthenticated. Default: false.
	AllowPlainHTTP bool

	// AllowProxyURL accepts proxy-url (rest.Config.Proxy): every request to the member goes
	// through the http, https or socks5 proxy the kubeconfig names. A proxy-url may carry the
	// proxy's own credentials as user info, the only place client-go takes them from, but no
	// query or fragment. Without a proxy-url, client-go uses the controller's own proxy
	// environment (HTTPS_PROXY, NO_PROXY), which this field does not affect. Default: false.
	AllowProxyURL bool
}

// Reasons returned by Reason. They are stable: use them as metric labels and Event reasons.
const (
	// ReasonExecPlugin: an exec credential plugin was rejected.
	ReasonExecPlugin = "ExecPlugin"
	// ReasonAuthProvider: an auth-provider plugin was rejected.
	ReasonAuthProvider = "AuthProviderPlugin"
	// ReasonLocalFile: a reference to a local file was rejected.
	ReasonLocalFile = "LocalFileReference"
	// ReasonInsecureTLS: insecure-skip-tls-verify was rejected.
	ReasonInsecureTLS = "InsecureTLS"
	// ReasonExecEnv: an environment variable of an exec plugin was rejected.
	ReasonExecEnv = "ExecEnv"
	// ReasonPlainHTTP: a server reached over plain http was rejected.
	ReasonPlainHTTP = "PlainHTTP"
	// ReasonProxyURL: a proxy-url was rejected.
	ReasonProxyURL = "ProxyURL"
	// ReasonURLData: user info, a query or a fragment in a URL was rejected.
	ReasonURLData = "URLData"
	// ReasonInvalid: the kubeconfig could not be decoded or is unusable (no such context, no
	// server, inconsistent fields).
	ReasonInvalid = "InvalidKubeconfig"
)

// Sentinel errors; every error of this package wraps exactly one of them, so errors.Is tells the
// kinds apart.
var (
	ErrExecPlugin   = errors.New("exec credential plugin not allowed")
	ErrAuthProvider = errors.New("auth-provider plugin not allowed")
	ErrLocalFile    = errors.New("local file reference not allowed")
	ErrInsecureTLS  = errors.New("insecure-skip-tls-verify not allowed")
	ErrExecEnv      = errors.New("exec plugin environment variable not allowed")
	ErrPlainHTTP    = errors.New("plain-text http server not allowed")
	ErrProxyURL     = errors.New("proxy-url not allowed")
	ErrURLData      = errors.New("user info, query or fragment in a URL not allowed")
	ErrInvalid      = errors.New("invalid kubeconfig")
)

// PolicyError is one feature of a kubeconfig that the Policy rejected. It names where the feature
// is and which Policy field allows it, never the value found there.
type PolicyError struct {
	// Kind is one of ErrExecPlugin, ErrExecEnv, ErrAuthProvider, ErrLocalFile,
	// ErrInsecureTLS, ErrPlainHTTP, ErrProxyURL and ErrURLData.
	Kind error
	// Field locates the feature, e.g. `user "ci" field client-key`.
	Field string
	// Allow is the Policy field that would accept it, e.g. "AllowLocalFiles"; empty when no
	// field does (ErrURLData).
	Allow string
}

func (e *PolicyError) Error() string {
	if e.Allow == "" {
		return fmt.Sprintf("%s: %s (no Policy field allows it)", e.Kind, e.Field)
	}
	return fmt.Sprintf("%s: %s (set Policy.%s to allow it)", e.Kind, e.Field, e.Allow)
}

// Unwrap returns Kind, so that errors.Is(err, ErrLocalFile) and friends work.
func (e *PolicyError) Unwrap() error { return e.Kind }

// Reason returns the stable reason string (Reason* constants) for an error returned by this
// package: the reason of the first violation when several were found. It returns "" for nil and
// for errors that do not come from this package.
func Reason(err error) string {
	if err == nil {
		return ""
	}
	var pe *PolicyError
	if errors.As(err, &pe) {
		return reasonOf(pe.Kind)
	}
	return reasonOf(err)
}

func reasonOf(err error) string {
	switch {
	case errors.Is(err, ErrExecPlugin):
		return ReasonExecPlugin
	case errors.Is(err, ErrAuthProvider):
		return ReasonAuthProvider
	case errors.Is(err, ErrLocalFile):
		return ReasonLocalFile
	case errors.Is(err, ErrInsecureTLS):
		return ReasonInsecureTLS
	case errors.Is(err, ErrExecEnv):
		return ReasonExecEnv
	case errors.Is(err, ErrPlainHTTP):
		return ReasonPlainHTTP
	case errors.Is(err, ErrProxyURL):
		return ReasonProxyURL
	case errors.Is(err, ErrURLData):
		return ReasonURLData
	case errors.Is(err, ErrInvalid):
		return ReasonInvalid
	}
	return ""
}

// Load decodes kubeconfig bytes, checks the current context against policy and returns the
// rest.Config of the current context. See LoadContext.
func Load(data []byte, policy Policy) (*rest.Config, error) {
	cfg, err := Parse(data)
	if err != nil {
		return nil, err
	}
	name, err := currentContext(cfg)
	if err != nil {
		return nil, err
	}
	return restConfig(cfg, name, policy)
}

// LoadContext decodes kubeconfig bytes, checks the named context (the current context when
// contextName is empty) against policy and returns its rest.Config. Only the context, cluster and
// user that are selected are checked: other entries of the file are never used.
//
// A context whose name is empty cannot be told from "the current context": when the document
// has one, an empty contextName is an error (wrapping ErrInvalid), never the current context.
// Providers that make a member of each context (see Contexts) so get an error on that member.
//
// All violations are reported at once, joined; each is a *PolicyError. Decoding and usability
// problems wrap ErrInvalid. No error quotes a value from data.
func LoadContext(data []byte, contextName string, policy Policy) (*rest.Config, error) {
	cfg, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return RESTConfig(cfg, contextName, policy)
}

// Parse decodes kubeconfig bytes (YAML or JSON). Unlike clientcmd.Load it fails on empty input,
// and its errors wrap ErrInvalid without quoting the input: decoder messages can contain
// fragments of the document, which may be credentials.
func Parse(data []byte) (*clientcmdapi.Config, error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrInvalid)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("%w: not a kubeconfig document (YAML or JSON of kind Config); decoder details withheld as they may quote credentials", ErrInvalid)
	}
	return cfg, nil
}

// Contexts returns the names of the contexts in a kubeconfig, sorted, for providers that make one
// cluster of each context. A context with an empty name is listed too (first), so that the
// provider reports it: LoadContext refuses it.
func Contexts(data []byte) ([]string, error) {
	cfg, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(cfg.Contexts)), nil
}

// RESTConfig checks the named context of an already decoded kubeconfig against policy and
// returns its rest.Config. An empty contextName selects the current context, unless the
// document has a context with an empty name (see LoadContext).
func RESTConfig(cfg *clientcmdapi.Config, contextName string, policy Policy) (*rest.Config, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: nil config", ErrInvalid)
	}
	name, err := selectContext(cfg, contextName)
	if err != nil {
		return nil, err
	}
	return restConfig(cfg, name, policy)
}

// restConfig checks the context name, which exists, and resolves it with clientcmd.
func restConfig(cfg *clientcmdapi.Config, name string, policy Policy) (*rest.Config, error) {
	if err := Check(cfg, name, policy); err != nil {
		return nil, err
	}
	rc, err := clientcmd.NewNonInteractiveClientConfig(*cfg, name, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		// clientcmd's validation messages name entries and fields, and file paths only of
		// references AllowLocalFiles accepted; the values that could quote credentials
		// (server, proxy-url) were checked above.
		return nil, fmt.Errorf("%w: context %q: %w", ErrInvalid, name, err)
	}
	// Belt and braces: whatever clientcmd resolved must pass the policy as well.
	if err := CheckRESTConfig(rc, policy); err != nil {
		return nil, err
	}
	return rc, nil
}

// errEmptyContextName is the error for a context named "", which callers cannot ask for
// without meaning the current context.
func errEmptyContextName() error {
	return fmt.Errorf("%w: a context has an empty name, which cannot be told from the current context; name it", ErrInvalid)
}

// selectContext returns contextName, or the current context when it is empty.
func selectContext(cfg *clientcmdapi.Config, contextName string) (string, error) {
	if contextName == "" {
		if _, ok := cfg.Contexts[""]; ok {
			return "", errEmptyContextName()
		}
		return currentContext(cfg)
	}
	if _, ok := cfg.Contexts[contextName]; !ok {
		return "", fmt.Errorf("%w: context %q not found", ErrInvalid, contextName)
	}
	return contextName, nil
}

// currentContext returns the current context, which must be set and exist.
func currentContext(cfg *clientcmdapi.Config) (string, error) {
	name := cfg.CurrentContext
	if name == "" {
		if len(cfg.Contexts) == 0 {
			return "", fmt.Errorf("%w: no contexts", ErrInvalid)
		}
		return "", fmt.Errorf("%w: current-context is not set and no context was chosen", ErrInvalid)
	}
	if _, ok := cfg.Contexts[name]; !ok {
		return "", fmt.Errorf("%w: context %q not found", ErrInvalid, name)
	}
	return name, nil
}

// Check reports every feature of the named context (its cluster and user) that policy rejects,
// joined, each as a *PolicyError; and an error wrapping ErrInvalid when the context name is
// empty, when the context or an entry it names does not exist, or when its server or proxy-url
// is not a usable URL. It returns nil when the context is acceptable.
func Check(cfg *clientcmdapi.Config, contextName string, policy Policy) error {
	if cfg == nil {
		return fmt.Errorf("%w: nil config", ErrInvalid)
	}
	if contextName == "" {
		return errEmptyContextName()
	}
	kctx, ok := cfg.Contexts[contextName]
	if !ok || kctx == nil {
		return fmt.Errorf("%w: context %q not found", ErrInvalid, contextName)
	}
	cluster, ok := cfg.Clusters[kctx.Cluster]
	if !ok || cluster == nil {
		return fmt.Errorf("%w: cluster %q of context %q not found", ErrInvalid, kctx.Cluster, contextName)
	}
	// An empty user means anonymous access, unless a user named "" exists: clientcmd then
	// uses it, so it is checked like any other.
	user := cfg.AuthInfos[kctx.AuthInfo]
	if user == nil && kctx.AuthInfo != "" {
		return fmt.Errorf("%w: user %q of context %q not found", ErrInvalid, kctx.AuthInfo, contextName)
	}

	var errs []error
	reject := func(kind error, allow, format string, args ...any) {
		errs = append(errs, &PolicyError{Kind: kind, Field: fmt.Sprintf(format, args...), Allow: allow})
	}
	c := kctx.Cluster
	where := fmt.Sprintf("cluster %q field ", c)
	if cluster.Server == "" {
		return fmt.Errorf("%w: %sserver is empty", ErrInvalid, where)
	}
	// clientcmd picks http or https for a server without a scheme before it reads the CA:
	// such a server is always reached over http, without the user's credentials.
	if err := checkServer(where+"server", cluster.Server, false, policy, &errs); err != nil {
		return err
	}
	if cluster.ProxyURL != "" {
		if err := checkProxyURL(where+"proxy-url", cluster.ProxyURL, policy, &errs); err != nil {
			return err
		}
	}
	if cluster.InsecureSkipTLSVerify && !policy.AllowInsecure {
		reject(ErrInsecureTLS, "AllowInsecure", "cluster %q field insecure-skip-tls-verify", c)
	}
	if cluster.CertificateAuthority != "" && !policy.AllowLocalFiles {
		reject(ErrLocalFile, "AllowLocalFiles", "cluster %q field certificate-authority", c)
	}
	if user != nil {
		u := kctx.AuthInfo
		for _, f := range []struct{ name, value string }{
			{"client-certificate", user.ClientCertificate},
			{"client-key", user.ClientKey},
			{"tokenFile", user.TokenFile},
		} {
			if f.value != "" && !policy.AllowLocalFiles {
				reject(ErrLocalFile, "AllowLocalFiles", "user %q field %s", u, f.name)
			}
		}
		if user.Exec != nil {
			if !policy.AllowExec {
				reject(ErrExecPlugin, "AllowExec", "user %q field exec", u)
			} else {
				if isPath(user.Exec.Command) && !policy.AllowLocalFiles {
					reject(ErrLocalFile, "AllowLocalFiles", "user %q field exec.command is a path, not a command name", u)
				}
				checkExecEnv(fmt.Sprintf("user %q field exec.env", u), user.Exec.Env, policy, &errs)
			}
		}
		if user.AuthProvider != nil {
			switch {
			case !policy.AllowAuthProvider:
				reject(ErrAuthProvider, "AllowAuthProvider", "user %q field auth-provider", u)
			case !policy.AllowLocalFiles:
				for _, key := range slices.Sorted(maps.Keys(user.AuthProvider.Config)) {
					if namesFile(key) && user.AuthProvider.Config[key] != "" {
						reject(ErrLocalFile, "AllowLocalFiles", "user %q field auth-provider.config.%s", u, key)
					}
				}
			}
		}
	}
	return errors.Join(errs...)
}

// CheckRESTConfig reports every feature of a rest.Config that policy rejects, joined, each as a
// *PolicyError; and an error wrapping ErrInvalid for a nil config or a Host that is empty or
// not a usable URL. Providers that build rest.Configs without a kubeconfig (for example from
// an inventory object's fields) use it to apply the same rules.
func CheckRESTConfig(cfg *rest.Config, policy Policy) error {
	if cfg == nil {
		return fmt.Errorf("%w: nil rest.Config", ErrInvalid)
	}
	var errs []error
	reject := func(kind error, allow, field string) {
		errs = append(errs, &PolicyError{Kind: kind, Field: "rest.Config field " + field, Allow: allow})
	}
	if cfg.Host == "" {
		// client-go would talk to localhost.
		return fmt.Errorf("%w: rest.Config field Host is empty", ErrInvalid)
	}
	hasTLS := len(cfg.CAFile) > 0 || len(cfg.CAData) > 0 || len(cfg.CertFile) > 0 || len(cfg.CertData) > 0 || cfg.Insecure
	if err := checkServer("rest.Config field Host", cfg.Host, hasTLS, policy, &errs); err != nil {
		return err
	}
	if cfg.Proxy != nil && !policy.AllowProxyURL {
		reject(ErrProxyURL, "AllowProxyURL", "Proxy")
	}
	if cfg.Insecure && !policy.AllowInsecure {
		reject(ErrInsecureTLS, "AllowInsecure", "TLSClientConfig.Insecure")
	}
	if !policy.AllowLocalFiles {
		for _, f := range []struct{ name, value string }{
			{"TLSClientConfig.CAFile", cfg.CAFile},
			{"TLSClientConfig.CertFile", cfg.CertFile},
			{"TLSClientConfig.KeyFile", cfg.KeyFile},
			{"BearerTokenFile", cfg.BearerTokenFile},
		} {
			if f.value != "" {
				reject(ErrLocalFile, "AllowLocalFiles", f.name)
			}
		}
	}
	if cfg.ExecProvider != nil {
		if !policy.AllowExec {
			reject(ErrExecPlugin, "AllowExec", "ExecProvider")
		} else {
			if isPath(cfg.ExecProvider.Command) && !policy.AllowLocalFiles {
				reject(ErrLocalFile, "AllowLocalFiles", "ExecProvider.Command is a path, not a command name")
			}
			checkExecEnv("rest.Config field ExecProvider.Env", cfg.ExecProvider.Env, policy, &errs)
		}
	}
	if cfg.AuthProvider != nil {
		switch {
		case !policy.AllowAuthProvider:
			reject(ErrAuthProvider, "AllowAuthProvider", "AuthProvider")
		case !policy.AllowLocalFiles:
			for _, key := range slices.Sorted(maps.Keys(cfg.AuthProvider.Config)) {
				if namesFile(key) && cfg.AuthProvider.Config[key] != "" {
					reject(ErrLocalFile, "AllowLocalFiles", "AuthProvider.Config."+key)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// isPath reports whether an exec command names a file rather than a program to look up in $PATH.
func isPath(command string) bool {
	return strings.ContainsAny(command, `/\`) || command == "." || command == ".."
}

// namesFile reports whether an auth-provider configuration key conventionally holds a file path,
// e.g. oidc's idp-certificate-authority or gcp's cmd-path.
func namesFile(key string) bool {
	k := strings.ToLower(key)
	if strings.HasSuffix(k, "-data") {
		return false
	}
	return strings.HasSuffix(k, "-path") || strings.HasSuffix(k, "-file") ||
		strings.HasSuffix(k, "certificate-authority") || strings.HasSuffix(k, "-dir")
}

// Hash returns a hex SHA-256 of kubeconfig bytes. Equal hashes mean identical documents; use it
// to skip re-engaging a cluster when the object holding its kubeconfig changed in other ways.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ContextHash returns a hex SHA-256 of what one context of a kubeconfig resolves to (the context,
// its cluster and its user), independent of the other contexts of the document and of formatting.
// Providers that make a cluster of each context use it to re-engage only the contexts whose
// content changed. An empty contextName selects the current context.
func ContextHash(data []byte, contextName string) (string, error) {
	cfg, err := Parse(data)
	if err != nil {
		return "", err
	}
	name, err := selectContext(cfg, contextName)
	if err != nil {
		return "", err
	}
	kctx := cfg.Contexts[name]
	only := clientcmdapi.NewConfig()
	only.CurrentContext = name
	only.Contexts[name] = kctx
	if cl, ok := cfg.Clusters[kctx.Cluster]; ok {
		only.Clusters[kctx.Cluster] = cl
	}
	if u, ok := cfg.AuthInfos[kctx.AuthInfo]; ok {
		only.AuthInfos[kctx.AuthInfo] = u
	}
	// Write emits entries sorted by name, so the encoding is canonical.
	canonical, err := clientcmd.Write(*only)
	if err != nil {
		return "", fmt.Errorf("%w: context %q cannot be encoded", ErrInvalid, name)
	}
	return Hash(canonical), nil
}
