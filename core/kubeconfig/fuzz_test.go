// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"mcr.dev/core/kubeconfig"
)

// The fuzz targets share one seed corpus of kubeconfigs (fuzzSeeds), written to
// testdata/fuzz/<FuzzName>/seed-* by `go test ./kubeconfig -run TestFuzzSeeds -update-seeds`
// and checked by TestFuzzSeeds without the flag. Other files there are crashers the fuzzers
// found, kept as regression seeds.
var updateSeeds = flag.Bool("update-seeds", false, "rewrite the seed corpora of the fuzz targets in testdata/fuzz")

// marker is planted in every credential field of the seeds (token, password, client key, URL
// user info, query and fragment, exec args and env values, auth-provider config values, proxy
// password). No error may contain it, unless the fuzzer moved it to a place errors may name (an
// entry's name, a key, a path): see publicText.
const marker = "S3CR3TMARK"

// keyWithMarker is a client key whose bytes contain marker, as base64 for client-key-data.
var keyWithMarker = base64.StdEncoding.EncodeToString([]byte("-----BEGIN EC PRIVATE KEY-----\n" + marker + "\n-----END EC PRIVATE KEY-----\n"))

// seedDoc builds a kubeconfig with context "c", cluster "k" (server and extra cluster lines)
// and user "u" (user lines).
func seedDoc(server, cluster, user string) string {
	return "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n" +
		"clusters:\n- name: k\n  cluster:\n    server: " + server + "\n" + indent(cluster, 4) +
		"\nusers:\n- name: u\n  user:\n" + indent(user, 4) + "\n"
}

// fuzzSeeds are valid kubeconfigs, one for each feature the policy refuses, and edge cases.
var fuzzSeeds = map[string]string{
	"token":           seedDoc("https://example.invalid:6443", "", "token: "+marker),
	"basic-auth":      seedDoc("https://example.invalid:6443", "", "username: admin\npassword: "+marker),
	"client-cert":     seedDoc("https://example.invalid", "certificate-authority-data: Y2E=", "client-certificate-data: Y2VydA==\nclient-key-data: "+keyWithMarker),
	"token-and-cert":  seedDoc("https://example.invalid", "", "token: "+marker+"\nclient-certificate-data: Y2VydA==\nclient-key-data: "+keyWithMarker),
	"token-and-basic": seedDoc("https://example.invalid", "", "token: "+marker+"\nusername: a\npassword: "+marker),
	"exec": seedDoc("https://example.invalid", "", "exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: get-token\n  args: [--secret, "+marker+"]\n"+
		"  interactiveMode: Never\n  env:\n  - {name: AWS_PROFILE, value: "+marker+"}"),
	"exec-loader-env": seedDoc("https://example.invalid", "", "exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: get-token\n  interactiveMode: Never\n"+
		"  env:\n  - {name: LD_PRELOAD, value: /tmp/"+marker+".so}\n  - {name: 'A="+marker+"', value: x}\n  - {name: '', value: "+marker+"}"),
	"exec-path":    seedDoc("https://example.invalid", "", "exec:\n  apiVersion: client.authentication.k8s.io/v1beta1\n  command: /usr/bin/get-token\n  interactiveMode: IfAvailable"),
	"exec-invalid": seedDoc("https://example.invalid", "", "exec:\n  command: get-token\n  args: ["+marker+"]"),
	"auth-provider": seedDoc("https://example.invalid", "", "auth-provider:\n  name: oidc\n  config:\n    id-token: "+marker+"\n    idp-certificate-authority: /etc/ca.crt\n"+
		"    idp-certificate-authority-data: Y2E=\n    client-secret: "+marker),
	"local-files":       seedDoc("https://example.invalid", "certificate-authority: /etc/ca.crt", "client-certificate: /etc/tls.crt\nclient-key: /etc/tls.key\ntokenFile: /var/run/token"),
	"insecure":          seedDoc("https://example.invalid", "insecure-skip-tls-verify: true", "token: "+marker),
	"server-userinfo":   seedDoc("https://admin:"+marker+"@example.invalid:6443", "", "token: "+marker),
	"server-user":       seedDoc("https://"+marker+"@example.invalid", "", ""),
	"server-query":      seedDoc("https://example.invalid/?token="+marker, "", ""),
	"server-path-query": seedDoc("https://example.invalid/k8s/clusters/c-1?access_token="+marker+"#"+marker, "", "token: "+marker),
	"server-fragment":   seedDoc("https://example.invalid#"+marker, "", ""),
	"server-path":       seedDoc("https://example.invalid:6443/k8s/clusters/c-1", "certificate-authority-data: Y2E=", "token: "+marker),
	"server-http":       seedDoc("http://example.invalid:8080", "", "token: "+marker),
	"server-no-scheme":  seedDoc("example.invalid:6443", "certificate-authority-data: Y2E=", "token: "+marker),
	"server-ipv6":       seedDoc("https://[::1]:6443", "", "token: "+marker),
	"server-ftp":        seedDoc("ftp://"+marker+"@example.invalid", "", ""),
	"server-unparsable": seedDoc(`"https://admin:`+marker+` x@example.invalid"`, "", "token: "+marker),
	"server-bad-port":   seedDoc("https://admin:"+marker+"@example.invalid:port", "", ""),
	"server-empty":      seedDoc(`""`, "", "token: "+marker),
	"proxy-url":         seedDoc("https://example.invalid", "proxy-url: http://admin:"+marker+"@proxy.invalid:3128", "token: "+marker),
	"proxy-url-socks":   seedDoc("https://example.invalid", "proxy-url: socks5://proxy.invalid:1080", ""),
	"proxy-url-query":   seedDoc("https://example.invalid", "proxy-url: https://proxy.invalid/?key="+marker, ""),
	"proxy-url-ftp":     seedDoc("https://example.invalid", "proxy-url: ftp://admin:"+marker+"@proxy.invalid", ""),
	"proxy-url-garbage": seedDoc("https://example.invalid", "proxy-url: '::"+marker+"'", ""),
	"empty-context-name": "apiVersion: v1\nkind: Config\ncurrent-context: good\ncontexts:\n- {name: '', context: {cluster: k, user: u}}\n" +
		"- {name: good, context: {cluster: k}}\nclusters:\n- {name: k, cluster: {server: 'https://example.invalid'}}\nusers:\n- {name: u, user: {token: " + marker + "}}\n",
	"empty-user-name": "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- {name: c, context: {cluster: ''}}\n" +
		"clusters:\n- {name: '', cluster: {server: 'https://example.invalid'}}\nusers:\n- {name: '', user: {tokenFile: /etc/shadow, password: " + marker + ", username: u}}\n",
	"multi-context": "apiVersion: v1\nkind: Config\ncurrent-context: safe\ncontexts:\n- {name: safe, context: {cluster: k, user: token}}\n" +
		"- {name: risky, context: {cluster: k, user: plugin}}\n- {name: ghost, context: {cluster: nowhere, user: nobody}}\n" +
		"clusters:\n- {name: k, cluster: {server: 'https://example.invalid'}}\nusers:\n- {name: token, user: {token: " + marker + "}}\n" +
		"- name: plugin\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: plugin, interactiveMode: Never, args: [" + marker + "]}\n",
	"no-current-context": "apiVersion: v1\nkind: Config\ncontexts:\n- {name: c, context: {cluster: k, user: u}}\n" +
		"clusters:\n- {name: k, cluster: {server: 'https://example.invalid'}}\nusers:\n- {name: u, user: {token: " + marker + "}}\n",
	"missing-entries": "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- {name: c, context: {cluster: k, user: u}}\n",
	"json": `{"apiVersion":"v1","kind":"Config","current-context":"c","contexts":[{"name":"c","context":{"cluster":"k","user":"u"}}],` +
		`"clusters":[{"name":"k","cluster":{"server":"https://example.invalid","proxy-url":"http://u:` + marker + `@p:1"}}],` +
		`"users":[{"name":"u","user":{"token":"` + marker + `","exec":{"apiVersion":"client.authentication.k8s.io/v1","command":"sh","args":["-c","` + marker + `"],"interactiveMode":"Never"}}}]}`,
	"wrong-types": seedDoc("https://example.invalid", "", "token: {nested: "+marker+"}"),
	"garbage":     "users: [ {name: u, user: {token: " + marker + "}\n  ::: }",
	"empty":       "",
}

// fuzzPolicies are the policies the seeds of FuzzLoad, FuzzLoadContext and FuzzCheck run with,
// as the byte policyOf decodes.
var fuzzPolicies = map[string]byte{"hardened": 0, "trusted": 0x3f}

// policyOf decodes a fuzzed byte into a Policy, one field a bit.
func policyOf(b byte) kubeconfig.Policy {
	p := kubeconfig.Policy{
		AllowExec:         b&1 != 0,
		AllowAuthProvider: b&2 != 0,
		AllowLocalFiles:   b&4 != 0,
		AllowInsecure:     b&8 != 0,
		AllowPlainHTTP:    b&16 != 0,
		AllowProxyURL:     b&32 != 0,
	}
	switch {
	case b&64 != 0:
		p.AllowExecEnv = "*"
	case b&128 != 0:
		p.AllowExecEnv = "LD_*,PATH"
	}
	return p
}

// publicText returns what errors may quote of a kubeconfig: entry names, keys, file paths,
// command names and the like. Credentials, the server and the proxy-url are left out.
func publicText(data []byte, extra ...string) string {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return strings.Join(extra, "\n")
	}
	public := append([]string{cfg.CurrentContext}, extra...)
	public = slices.AppendSeq(public, maps.Keys(cfg.Extensions))
	for name, c := range cfg.Contexts {
		public = append(public, name)
		if c != nil {
			public = append(public, c.Cluster, c.AuthInfo, c.Namespace)
		}
	}
	for name, c := range cfg.Clusters {
		public = append(public, name)
		if c != nil {
			public = append(public, c.CertificateAuthority, c.TLSServerName)
		}
	}
	for name, u := range cfg.AuthInfos {
		public = append(public, name)
		if u == nil {
			continue
		}
		public = append(public, u.ClientCertificate, u.ClientKey, u.TokenFile, u.Username, u.Impersonate, u.ImpersonateUID)
		public = append(public, u.ImpersonateGroups...)
		for k, v := range u.ImpersonateUserExtra {
			public = append(public, k)
			public = append(public, v...)
		}
		if e := u.Exec; e != nil {
			public = append(public, e.Command, e.APIVersion, e.InstallHint, string(e.InteractiveMode))
			for _, v := range e.Env {
				public = append(public, v.Name)
			}
		}
		if a := u.AuthProvider; a != nil {
			public = append(public, a.Name)
			public = slices.AppendSeq(public, maps.Keys(a.Config))
		}
	}
	return strings.Join(public, "\n")
}

// noSecret fails when err quotes the marker from a credential field of data.
func noSecret(t *testing.T, err error, data []byte, extra ...string) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	if !strings.Contains(msg, marker) && !strings.Contains(msg, base64.StdEncoding.EncodeToString([]byte(marker))) {
		return
	}
	if strings.Contains(publicText(data, extra...), marker) {
		return // the marker is an entry's name, a key or a path here, which errors may name
	}
	t.Fatalf("error quotes a credential of the kubeconfig: %v", err)
}

// checkAccepted fails when cfg, which Load or RESTConfig returned for policy, is not what
// CheckRESTConfig accepts or would reach its server otherwise than the policy says.
func checkAccepted(t *testing.T, cfg *rest.Config, policy kubeconfig.Policy) {
	t.Helper()
	if cfg == nil {
		t.Fatal("nil config without error")
	}
	if err := kubeconfig.CheckRESTConfig(cfg, policy); err != nil {
		t.Fatalf("accepted config fails CheckRESTConfig under the same policy: %v", err)
	}
	u, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		t.Fatalf("client-go cannot use the accepted config's host: %v", err)
	}
	switch {
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		t.Fatal("accepted config's server carries user info, a query or a fragment")
	case u.Scheme != "https" && (u.Scheme != "http" || !policy.AllowPlainHTTP):
		t.Fatalf("accepted config's server is reached over %s", u.Scheme)
	case cfg.Proxy != nil && !policy.AllowProxyURL:
		t.Fatal("accepted config has a proxy")
	}
}

// checkRefused fails when err, an error of the package, wraps none of its sentinels.
func checkRefused(t *testing.T, err error, data []byte, extra ...string) {
	t.Helper()
	if kubeconfig.Reason(err) == "" {
		t.Fatalf("error wraps none of the package's sentinels: %v", err)
	}
	noSecret(t, err, data, extra...)
}

func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := kubeconfig.Parse(data)
		if err != nil {
			if cfg != nil {
				t.Fatal("config returned together with an error")
			}
			if !errors.Is(err, kubeconfig.ErrInvalid) || strings.Contains(err.Error(), marker) {
				t.Fatalf("Parse error does not wrap ErrInvalid or quotes the input: %v", err)
			}
			return
		}
		if cfg == nil {
			t.Fatal("nil config without error")
		}
	})
}

func FuzzContexts(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		names, err := kubeconfig.Contexts(data)
		if err != nil {
			checkRefused(t, err, data)
			return
		}
		cfg, err := kubeconfig.Parse(data)
		if err != nil {
			t.Fatalf("Contexts accepted what Parse refuses: %v", err)
		}
		if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) || len(names) != len(cfg.Contexts) {
			t.Fatalf("Contexts = %q: not the sorted, unique names of the %d contexts", names, len(cfg.Contexts))
		}
		for _, name := range names {
			if _, ok := cfg.Contexts[name]; !ok {
				t.Fatalf("Contexts lists %q, which is no context", name)
			}
		}
	})
}

func FuzzLoad(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, policyBits byte) {
		policy := policyOf(policyBits)
		cfg, err := kubeconfig.Load(data, policy)
		if err != nil {
			if cfg != nil {
				t.Fatal("config returned together with an error")
			}
			checkRefused(t, err, data)
			return
		}
		checkAccepted(t, cfg, policy)
	})
}

func FuzzLoadContext(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, contextName string, policyBits byte) {
		policy := policyOf(policyBits)
		cfg, err := kubeconfig.LoadContext(data, contextName, policy)
		if err != nil {
			if cfg != nil {
				t.Fatal("config returned together with an error")
			}
			checkRefused(t, err, data, contextName)
			return
		}
		checkAccepted(t, cfg, policy)
		if contextName == "" {
			parsed, _ := kubeconfig.Parse(data)
			if _, ok := parsed.Contexts[""]; ok {
				t.Fatal(`LoadContext("") resolved the current context although a context is named ""`)
			}
		}
	})
}

func FuzzCheck(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, policyBits byte) {
		policy := policyOf(policyBits)
		cfg, err := kubeconfig.Parse(data)
		if err != nil {
			return
		}
		for _, name := range slices.Sorted(maps.Keys(cfg.Contexts)) {
			err := kubeconfig.Check(cfg, name, policy)
			if err != nil {
				checkRefused(t, err, data, name)
				continue
			}
			rc, err := kubeconfig.RESTConfig(cfg, name, policy)
			if err != nil {
				var pe *kubeconfig.PolicyError
				if errors.As(err, &pe) {
					t.Fatalf("Check accepted context %q, RESTConfig refused it by policy: %v", name, err)
				}
				checkRefused(t, err, data, name)
				continue
			}
			checkAccepted(t, rc, policy)
		}
	})
}

func FuzzHash(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, contextName string) {
		h := kubeconfig.Hash(data)
		if _, err := hex.DecodeString(h); err != nil || len(h) != 64 || h != kubeconfig.Hash(slices.Clone(data)) {
			t.Fatalf("Hash = %q: not a stable hex SHA-256", h)
		}
		ch, err := kubeconfig.ContextHash(data, contextName)
		if err != nil {
			checkRefused(t, err, data, contextName)
			return
		}
		if again, err := kubeconfig.ContextHash(slices.Clone(data), contextName); err != nil || again != ch {
			t.Fatalf("ContextHash is not deterministic: %q then %q, %v", ch, again, err)
		}
	})
}

// fuzzTargets are the fuzz targets and the seed values of each seed document.
var fuzzTargets = map[string]func(doc string) map[string][]any{
	"FuzzParse":    func(doc string) map[string][]any { return map[string][]any{"": {[]byte(doc)}} },
	"FuzzContexts": func(doc string) map[string][]any { return map[string][]any{"": {[]byte(doc)}} },
	"FuzzHash": func(doc string) map[string][]any {
		return map[string][]any{"-current": {[]byte(doc), ""}, "-named": {[]byte(doc), "c"}}
	},
	"FuzzLoad":        withPolicies(func(doc string, p byte) []any { return []any{[]byte(doc), p} }),
	"FuzzLoadContext": withPolicies(func(doc string, p byte) []any { return []any{[]byte(doc), "c", p} }),
	"FuzzCheck":       withPolicies(func(doc string, p byte) []any { return []any{[]byte(doc), p} }),
}

func withPolicies(values func(doc string, p byte) []any) func(doc string) map[string][]any {
	return func(doc string) map[string][]any {
		out := map[string][]any{}
		for name, p := range fuzzPolicies {
			out["-"+name] = values(doc, p)
		}
		return out
	}
}

// corpusFile encodes values in the format of go test's fuzz corpus files.
func corpusFile(values []any) []byte {
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, v := range values {
		switch v := v.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", v)
		case string:
			fmt.Fprintf(&b, "string(%q)\n", v)
		case byte:
			fmt.Fprintf(&b, "byte(%q)\n", v)
		default:
			panic(fmt.Sprintf("corpusFile: %T", v))
		}
	}
	return []byte(b.String())
}

// TestFuzzSeeds checks that testdata/fuzz holds the seed corpus of every fuzz target, as
// fuzzSeeds says; with -update-seeds it writes it.
func TestFuzzSeeds(t *testing.T) {
	for target, seeds := range fuzzTargets {
		dir := filepath.Join("testdata", "fuzz", target)
		if *updateSeeds {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for doc, data := range fuzzSeeds {
			for suffix, values := range seeds(data) {
				path := filepath.Join(dir, "seed-"+doc+suffix)
				want := corpusFile(values)
				if *updateSeeds {
					if err := os.WriteFile(path, want, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				got, err := os.ReadFile(path)
				if err != nil || string(got) != string(want) {
					t.Errorf("%s is missing or stale (%v): run go test ./kubeconfig -run TestFuzzSeeds -update-seeds", path, err)
				}
			}
		}
	}
}
