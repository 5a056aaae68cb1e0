package kubeconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Policy says which potentially dangerous kubeconfig features Load accepts. The zero value is
// the hardened default: every feature below is rejected. Enable a field only for kubeconfigs
// whose authors are as trusted as the controller itself.
type Policy struct {
	// AllowExec accepts exec credential plugins (users[].user.exec), which run a program in the
	// controller's process environment every time credentials are needed. With AllowLocalFiles
	// unset, the plugin command must be a bare name looked up in $PATH, not a path.
	// Default: false.
	AllowExec bool

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
	ErrInvalid      = errors.New("invalid kubeconfig")
)

// PolicyError is one feature of a kubeconfig that the Policy rejected. It names where the feature
// is and which Policy field allows it, never the value found there.
type PolicyError struct {
	// Kind is one of ErrExecPlugin, ErrAuthProvider, ErrLocalFile and ErrInsecureTLS.
	Kind error
	// Field locates the feature, e.g. `user "ci" field client-key`.
	Field string
	// Allow is the Policy field that would accept it, e.g. "AllowLocalFiles".
	Allow string
}

func (e *PolicyError) Error() string {
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
	case errors.Is(err, ErrInvalid):
		return ReasonInvalid
	}
	return ""
}

// Load decodes kubeconfig bytes, checks the current context against policy and returns the
// rest.Config of the current context. See LoadContext.
func Load(data []byte, policy Policy) (*rest.Config, error) {
	return LoadContext(data, "", policy)
}

// LoadContext decodes kubeconfig bytes, checks the named context (the current context when
// contextName is empty) against policy and returns its rest.Config. Only the context, cluster and
// user that are selected are checked: other entries of the file are never used.
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
// cluster of each context.
func Contexts(data []byte) ([]string, error) {
	cfg, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(cfg.Contexts)), nil
}

// RESTConfig checks the named context of an already decoded kubeconfig against policy and
// returns its rest.Config. An empty contextName selects the current context.
func RESTConfig(cfg *clientcmdapi.Config, contextName string, policy Policy) (*rest.Config, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: nil config", ErrInvalid)
	}
	name, err := selectContext(cfg, contextName)
	if err != nil {
		return nil, err
	}
	if err := Check(cfg, name, policy); err != nil {
		return nil, err
	}
	rc, err := clientcmd.NewNonInteractiveClientConfig(*cfg, name, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		// clientcmd's validation messages name entries and fields, never values.
		return nil, fmt.Errorf("%w: context %q: %w", ErrInvalid, name, err)
	}
	// Belt and braces: whatever clientcmd resolved must pass the policy as well.
	if err := CheckRESTConfig(rc, policy); err != nil {
		return nil, err
	}
	return rc, nil
}

func selectContext(cfg *clientcmdapi.Config, contextName string) (string, error) {
	if contextName == "" {
		contextName = cfg.CurrentContext
		if contextName == "" {
			if len(cfg.Contexts) == 0 {
				return "", fmt.Errorf("%w: no contexts", ErrInvalid)
			}
			return "", fmt.Errorf("%w: current-context is not set and no context was chosen", ErrInvalid)
		}
	}
	if _, ok := cfg.Contexts[contextName]; !ok {
		return "", fmt.Errorf("%w: context %q not found", ErrInvalid, contextName)
	}
	return contextName, nil
}

// Check reports every feature of the named context (its cluster and user) that policy rejects,
// joined, each as a *PolicyError; and an error wrapping ErrInvalid when the context or an entry
// it names does not exist. It returns nil when the context is acceptable.
func Check(cfg *clientcmdapi.Config, contextName string, policy Policy) error {
	kctx, ok := cfg.Contexts[contextName]
	if !ok || kctx == nil {
		return fmt.Errorf("%w: context %q not found", ErrInvalid, contextName)
	}
	cluster, ok := cfg.Clusters[kctx.Cluster]
	if !ok || cluster == nil {
		return fmt.Errorf("%w: cluster %q of context %q not found", ErrInvalid, kctx.Cluster, contextName)
	}
	var user *clientcmdapi.AuthInfo
	if kctx.AuthInfo != "" { // an empty user means anonymous access
		if user, ok = cfg.AuthInfos[kctx.AuthInfo]; !ok || user == nil {
			return fmt.Errorf("%w: user %q of context %q not found", ErrInvalid, kctx.AuthInfo, contextName)
		}
	}

	var errs []error
	reject := func(kind error, allow, format string, args ...any) {
		errs = append(errs, &PolicyError{Kind: kind, Field: fmt.Sprintf(format, args...), Allow: allow})
	}
	c := kctx.Cluster
	// clientcmd quotes a malformed proxy-url in its error, and proxy URLs may carry a password.
	if cluster.ProxyURL != "" {
		u, err := url.Parse(cluster.ProxyURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5") {
			return fmt.Errorf("%w: cluster %q field proxy-url is not an http, https or socks5 URL", ErrInvalid, c)
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
			switch {
			case !policy.AllowExec:
				reject(ErrExecPlugin, "AllowExec", "user %q field exec", u)
			case isPath(user.Exec.Command) && !policy.AllowLocalFiles:
				reject(ErrLocalFile, "AllowLocalFiles", "user %q field exec.command is a path, not a command name", u)
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
// *PolicyError. Providers that build rest.Configs without a kubeconfig (for example from an
// inventory object's fields) use it to apply the same rules.
func CheckRESTConfig(cfg *rest.Config, policy Policy) error {
	if cfg == nil {
		return fmt.Errorf("%w: nil rest.Config", ErrInvalid)
	}
	var errs []error
	reject := func(kind error, allow, field string) {
		errs = append(errs, &PolicyError{Kind: kind, Field: "rest.Config field " + field, Allow: allow})
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
		switch {
		case !policy.AllowExec:
			reject(ErrExecPlugin, "AllowExec", "ExecProvider")
		case isPath(cfg.ExecProvider.Command) && !policy.AllowLocalFiles:
			reject(ErrLocalFile, "AllowLocalFiles", "ExecProvider.Command is a path, not a command name")
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
