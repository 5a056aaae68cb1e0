// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/core/redact"
)

func TestRedactText(t *testing.T) {
	tests := []struct {
		name, in string
		// gone must not be in the output, kept must.
		gone, kept []string
	}{
		{
			name: "client-go request error",
			in:   `Get "https://admin:hunter2@10.0.0.1:6443/api/v1/namespaces?timeout=32s&token=qu3ry-t0ken": dial tcp 10.0.0.1:6443: connect: connection refused`,
			gone: []string{"admin", "hunter2", "qu3ry-t0ken", "timeout=32s"},
			kept: []string{`Get "https://REDACTED@10.0.0.1:6443/api/v1/namespaces?REDACTED": dial tcp 10.0.0.1:6443: connect: connection refused`},
		},
		{
			name: "exec plugin output client-go could not decode",
			in:   "getting credentials: decoding stdout: parsing time \"pl4gin-0utput\" as \"2006-01-02T15:04:05Z07:00\": cannot parse\nnext line",
			gone: []string{"pl4gin-0utput"},
			kept: []string{"getting credentials: decoding stdout: REDACTED\nnext line"},
		},
		{
			name: "several URLs, upper case, fragment",
			in:   "HTTPS://U:P4ssw0rd@h/x#fr4gment and socks5://proxy-user:pr0xy-pass@proxy:1080 then wss://h/?a=b",
			gone: []string{"P4ssw0rd", "fr4gment", "pr0xy-pass", "a=b"},
			kept: []string{"HTTPS://REDACTED@h/x#REDACTED", "socks5://REDACTED@proxy:1080", "wss://h/?REDACTED"},
		},
		{
			name: "password with a slash, an at sign and an escaped quote",
			in:   `parse "https://user:pa/ss@w\"rd@example.com:6443": invalid port`,
			gone: []string{"pa/ss", `w\"rd`},
			kept: []string{"example.com:6443", "invalid port"},
		},
		{
			name: "credential parameters outside a URL, a quote in a host",
			in:   `POST /token?grant_type=x&client_secret=cl13nt-s3cret; GET https://h"q/a?b=qu3ry-t0ken`,
			gone: []string{"cl13nt-s3cret", "qu3ry-t0ken"},
			kept: []string{"/token?grant_type=x&client_secret=REDACTED;"},
		},
		{
			name: "Authorization headers",
			in:   `Authorization: Bearer abc.def.ghi map[Authorization:[Basic YWRtaW46aHVudGVyMg==]] {"authorization": "bearer s3cr3tt0ken"}`,
			gone: []string{"abc.def.ghi", "YWRtaW46aHVudGVyMg==", "s3cr3tt0ken"},
			kept: []string{"Authorization: Bearer REDACTED"},
		},
		{
			name: "bearer token and JWT in prose",
			in:   "sent Bearer 0123456789abcdefghij to the member; token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl was refused",
			gone: []string{"0123456789abcdefghij", "eyJhbGciOiJSUzI1NiJ9", "c2lnbmF0dXJl"},
			kept: []string{"sent Bearer REDACTED to the member", "was refused"},
		},
		{
			name: "private key",
			in:   "key: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIK3y\n-----END EC PRIVATE KEY-----\n done",
			gone: []string{"MHcCAQEEIK3y"},
			kept: []string{"key: REDACTED", "done"},
		},
		{
			name: "text without credentials is left alone",
			in:   "the member refused the credentials (401 Unauthorized); bearer token file and authorization webhook at https://10.0.0.1:6443/api are fine: Bearer token",
			kept: []string{"the member refused the credentials (401 Unauthorized); bearer token file and authorization webhook at https://10.0.0.1:6443/api are fine: Bearer token"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := redact.Text(tc.in)
			for _, s := range tc.gone {
				if strings.Contains(got, s) {
					t.Errorf("RedactText left %q in %q", s, got)
				}
			}
			for _, s := range tc.kept {
				if !strings.Contains(got, s) {
					t.Errorf("RedactText(%q) = %q, want it to contain %q", tc.in, got, s)
				}
			}
		})
	}

	if got := redact.Text("plugin failed for M4rk3rS3cr3t and abc", "M4rk3rS3cr3t", "abc", ""); got != "plugin failed for REDACTED and abc" {
		t.Errorf("RedactText with secrets = %q; want the long secret gone and the short one (a word) left", got)
	}
}

// The errors net/http really returns quote the request URL (with the password as ***, the user
// and the query as they are).
func TestRedactTextOfNetHTTPErrors(t *testing.T) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://us3r-n4me:hunter2@127.0.0.1:1/api?token=qu3ry-t0ken", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = http.DefaultClient.Do(req)
	if err == nil {
		t.Fatal("a request to port 1 succeeded")
	}
	if !strings.Contains(err.Error(), "qu3ry-t0ken") {
		t.Logf("net/http no longer quotes the query: %v", err)
	}
	got := redact.Error(err).Error()
	for _, s := range []string{"us3r-n4me", "hunter2", "qu3ry-t0ken"} {
		if strings.Contains(got, s) {
			t.Errorf("Redact left %q in %q", s, got)
		}
	}
}

func TestRedact(t *testing.T) {
	if redact.Error(nil) != nil {
		t.Error("Redact(nil) is not nil")
	}
	inner := errors.New("the member did not answer")
	err := redact.Error(errors.Join(inner, errors.New(`Get "https://u:hunter2@h/": EOF`)))
	if !errors.Is(err, inner) {
		t.Error("Redact hides what the error wraps from errors.Is")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Redact left the password in %q", err)
	}
	if again := redact.Error(err); again != err {
		t.Error("Redact of a redacted error wraps it again")
	}
	if got := redact.Error(err, "the member did").Error(); strings.Contains(got, "the member did") {
		t.Errorf("Redact of a redacted error with secrets left a secret: %q", got)
	}
}

func TestSecrets(t *testing.T) {
	cfg := &rest.Config{
		Host:        "https://user:url-password@h/?query-token",
		BearerToken: "bearer-token",
		Password:    "basic-password",
		TLSClientConfig: rest.TLSClientConfig{
			KeyData: []byte("client-key-bytes"),
		},
		ExecProvider: &clientcmdapi.ExecConfig{Args: []string{"exec-argument"}, Env: []clientcmdapi.ExecEnvVar{{Name: "N", Value: "exec-env-value"}}},
		AuthProvider: &clientcmdapi.AuthProviderConfig{Config: map[string]string{"id-token": "auth-provider-token"}},
	}
	secrets := strings.Join(redact.Secrets(cfg), "\n")
	for _, want := range []string{"url-password", "query-token", "bearer-token", "basic-password", "client-key-bytes", "exec-argument", "exec-env-value", "auth-provider-token"} {
		if !strings.Contains(secrets, want) {
			t.Errorf("Secrets misses %q", want)
		}
	}
	if redact.Secrets(nil) != nil {
		t.Error("Secrets(nil) is not nil")
	}
}

func TestRedactLogger(t *testing.T) {
	var lines []string
	base := funcr.New(func(prefix, args string) { lines = append(lines, prefix+" "+args) }, funcr.Options{LogCaller: funcr.All})
	log := redact.Logger(base)
	if redact.Logger(log).GetSink() != log.GetSink() {
		t.Error("RedactLogger wraps a redacting logger again")
	}
	secretURL := "https://u:hunter2@h/?token=qu3ry-t0ken"
	log.WithName("member "+secretURL).WithValues("server", secretURL).Info("dialing "+secretURL, "error", errors.New(secretURL), "count", 3)
	log.Error(errors.New("Get \""+secretURL+"\": EOF"), "failed", "secretURL", stringer(secretURL))
	log.WithCallDepth(0).Info("depth")
	if len(lines) != 3 {
		t.Fatalf("logged %d lines, want 3: %q", len(lines), lines)
	}
	for _, l := range lines {
		if strings.Contains(l, "hunter2") || strings.Contains(l, "qu3ry-t0ken") {
			t.Errorf("logged a credential: %s", l)
		}
		if !strings.Contains(l, `"file"="redact_test.go"`) {
			t.Errorf("the caller is not the test, but %s", l)
		}
	}
	if !strings.Contains(lines[0], `"count"=3`) {
		t.Errorf("a value that is no text changed: %s", lines[0])
	}

	// SetDefaults makes every provider's logger redact.
	var buf providertest.LogBuffer
	o := kit.Options{Logger: buf.Logger()}
	o.SetDefaults("test-provider")
	o.Logger.Info("engaging " + secretURL)
	if buf.Contains("hunter2") || !buf.Contains("engaging https://REDACTED@h/?REDACTED") {
		t.Errorf("Options.Logger after SetDefaults does not redact: %q", buf.Lines())
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

// FuzzRedactText checks that a secret in the password or the query of any URL that net/url
// writes is gone from any text around it, quoted (as errors quote URLs) or not.
func FuzzRedactText(f *testing.F) {
	f.Add("Get ", "admin", "pa/ss@w\"rd", "10.0.0.1:6443", "/api/v1/namespaces", "timeout=32s", `: dial tcp: connection refused`, byte(7))
	f.Add("", "", "", "h", "", "", "", byte(1))
	f.Add("proxy x://", "u", "p", "[::1]:443", "/a@b", "a=b#c", "@evil?x=y", byte(2))
	f.Add(`"Authorization: `, "user name", "p\\", "h:1", "/%2F", "", `\"`, byte(3))
	const secret = "Fuzz3dS3cret"
	f.Fuzz(func(t *testing.T, prefix, user, password, host, path, query, suffix string, mode byte) {
		for _, s := range []string{prefix, user, password, host, path, query, suffix} {
			if strings.Contains(s, secret) {
				return
			}
		}
		u := &url.URL{Scheme: "https", Host: host, Path: path}
		if mode&1 != 0 {
			u.User = url.UserPassword(user, password+secret)
		}
		if mode&2 != 0 {
			u.RawQuery = "token=" + secret + "&" + url.QueryEscape(query)
		}
		if mode&3 == 0 {
			u.Fragment = secret
		}
		text := u.String()
		if mode&4 != 0 {
			text = strconv.Quote(text)
		}
		if out := redact.Text(prefix + text + suffix); strings.Contains(out, secret) {
			t.Fatalf("RedactText(%q) = %q", prefix+text+suffix, out)
		}
	})
}
