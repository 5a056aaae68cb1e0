// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package execplugin_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"mcr.dev/core/envtest"
	"mcr.dev/core/internal/execplugin"
	"mcr.dev/core/providers/providertest"
)

const v1 = "client.authentication.k8s.io/v1"

// plugin writes a shell script with body to a new directory and returns an exec config that
// runs it, with a marker of its own in its env (see providertest.ProcessesWithEnv), and the
// directory (for files the script keeps between runs).
func plugin(t *testing.T, body string) (*clientcmdapi.ExecConfig, string, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "plugin.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	marker := providertest.Marker("plugin")
	return &clientcmdapi.ExecConfig{
		APIVersion: v1, Command: path, InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		Env: []clientcmdapi.ExecEnvVar{{Name: "MCR_TEST_PLUGIN", Value: marker}, {Name: "STATE", Value: dir}},
	}, dir, marker
}

// tokenScript answers with a token (a shell expression) and expiry (RFC 3339, empty for none).
func tokenScript(token, expiry string) string {
	exp := ""
	if expiry != "" {
		exp = `,"expirationTimestamp":"` + expiry + `"`
	}
	return `echo run >> "$STATE/runs"
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"` + exp + `}}' "` + token + `"`
}

func runs(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "runs"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(data), "run")
}

func source(t *testing.T, ec *clientcmdapi.ExecConfig, opts execplugin.Options) (*rest.Config, *execplugin.Source) {
	t.Helper()
	if opts.Member == "" {
		opts.Member = "fleet/east"
	}
	cfg, s, err := execplugin.Config(context.Background(), &rest.Config{Host: "https://127.0.0.1:1", ExecProvider: ec}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return cfg, s
}

func TestToken(t *testing.T) {
	ec, dir, marker := plugin(t, `printf '%s' "$KUBERNETES_EXEC_INFO" > "$STATE/info"
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-%s"}}' "$1"`)
	ec.Args = []string{"east"}
	ec.ProvideClusterInfo = true
	ec.Config = &runtime.Unknown{Raw: []byte(`{"clusterName":"east"}`), ContentType: runtime.ContentTypeJSON}

	var got []string
	var mu sync.Mutex
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	cfg, s, err := execplugin.Config(context.Background(), &rest.Config{Host: srv.URL, ExecProvider: ec,
		TLSClientConfig: rest.TLSClientConfig{CAData: caPEM, ServerName: "example.com"}}, execplugin.Options{Member: "fleet/east"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if cfg.ExecProvider != nil || cfg.Transport == nil || len(cfg.CAData) != 0 {
		t.Fatalf("config not converted: exec %v, transport %v, CA %d bytes", cfg.ExecProvider, cfg.Transport, len(cfg.CAData))
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		res, err := client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || got[0] != "Bearer tok-east" || got[2] != got[0] {
		t.Fatalf("Authorization headers %q", got)
	}
	info, err := os.ReadFile(filepath.Join(dir, "info"))
	if err != nil {
		t.Fatal(err)
	}
	var cred struct {
		APIVersion string `json:"apiVersion"`
		Spec       struct {
			Interactive bool `json:"interactive"`
			Cluster     struct {
				Server                   string          `json:"server"`
				TLSServerName            string          `json:"tls-server-name"`
				CertificateAuthorityData []byte          `json:"certificate-authority-data"`
				Config                   json.RawMessage `json:"config"`
			} `json:"cluster"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(info, &cred); err != nil {
		t.Fatalf("KUBERNETES_EXEC_INFO %q: %v", info, err)
	}
	c := cred.Spec.Cluster
	if cred.APIVersion != v1 || cred.Spec.Interactive || c.Server != srv.URL || c.TLSServerName != "example.com" ||
		string(c.CertificateAuthorityData) != string(caPEM) || string(c.Config) != `{"clusterName":"east"}` {
		t.Errorf("KUBERNETES_EXEC_INFO %s", info)
	}
	s.Close()
	providertest.NoProcessesWithEnv(t, marker, 10*time.Second)
}

func TestV1beta1AndInteractiveModes(t *testing.T) {
	ec, _, _ := plugin(t, `echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}}'`)
	ec.APIVersion = "client.authentication.k8s.io/v1beta1"
	ec.InteractiveMode = clientcmdapi.IfAvailableExecInteractiveMode
	_, s := source(t, ec, execplugin.Options{})
	if c, err := s.Get(context.Background()); err != nil || c.Token != "t" {
		t.Fatalf("v1beta1: %v, %v", c, err)
	}

	ec.InteractiveMode = clientcmdapi.AlwaysExecInteractiveMode
	_, _, err := execplugin.Config(context.Background(), &rest.Config{Host: "https://x", ExecProvider: ec}, execplugin.Options{Member: "m"})
	if err == nil || !strings.Contains(err.Error(), "terminal") {
		t.Errorf("interactiveMode Always: %v", err)
	}
	ec.InteractiveMode, ec.APIVersion = "", "client.authentication.k8s.io/v1alpha1"
	_, _, err = execplugin.Config(context.Background(), &rest.Config{Host: "https://x", ExecProvider: ec}, execplugin.Options{Member: "m"})
	if err == nil || !strings.Contains(err.Error(), "apiVersion") {
		t.Errorf("v1alpha1: %v", err)
	}
	ec.APIVersion = v1
	ec.PluginPolicy = clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyAllowlist, Allowlist: []clientcmdapi.AllowlistEntry{{Command: "other"}}}
	_, _, err = execplugin.Config(context.Background(), &rest.Config{Host: "https://x", ExecProvider: ec}, execplugin.Options{Member: "m"})
	if err == nil || !strings.Contains(err.Error(), "allowlist") {
		t.Errorf("allowlist: %v", err)
	}
}

func TestOtherCredentialsWin(t *testing.T) {
	ec, _, _ := plugin(t, `exit 1`)
	cfg, s, err := execplugin.Config(context.Background(), &rest.Config{Host: "https://x", BearerToken: "t", ExecProvider: ec}, execplugin.Options{})
	if err != nil || s != nil || cfg.ExecProvider != nil || cfg.BearerToken != "t" || cfg.Transport != nil {
		t.Fatalf("got %+v, %v, %v", cfg, s, err)
	}
}

func TestTimeoutKillsGroup(t *testing.T) {
	// The plugin waits for a child: only killing the group ends the child.
	ec, _, marker := plugin(t, `sleep 3600; echo never`)
	_, s := source(t, ec, execplugin.Options{Timeout: 500 * time.Millisecond})
	start := time.Now()
	_, err := s.Get(context.Background())
	if !errors.Is(err, execplugin.ErrTimeout) || !strings.Contains(err.Error(), `"plugin.sh" of member "fleet/east" did not answer within 500ms`) {
		t.Fatalf("got %v", err)
	}
	t.Logf("timed out after %s", time.Since(start))
	providertest.NoProcessesWithEnv(t, marker, 10*time.Second)
}

func TestOutputCap(t *testing.T) {
	ec, _, marker := plugin(t, `head -c 209715200 /dev/zero | tr '\0' x; sleep 3600`)
	_, s := source(t, ec, execplugin.Options{MaxOutput: 1 << 20})
	_, err := s.Get(context.Background())
	if !errors.Is(err, execplugin.ErrOutputTooLarge) || !strings.HasSuffix(err.Error(), "wrote more than 1 MiB to stdout") {
		t.Fatalf("got %v", err)
	}
	providertest.NoProcessesWithEnv(t, marker, 10*time.Second)
}

func TestFailuresNeverQuoteOutput(t *testing.T) {
	const secret = "S3cretOutput"
	for _, tc := range []struct{ script, want string }{
		{`echo ` + secret + ` >&2; echo ` + secret + `; exit 3`, "exited with status 3"},
		{`kill -9 $$`, "was killed by signal 9"},
		{`echo ` + secret, "answered with something that is no ExecCredential"},
		{`echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t","expirationTimestamp":"` + secret + `"}}'`,
			"answered with something that is no ExecCredential"},
		{`echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"` + secret + `"}}'`,
			"answered with another apiVersion"},
		{`echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"}'`, "answered without a status"},
		{`echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientKeyData":"` + secret + `"}}'`,
			"a certificate or a key, not both"},
	} {
		ec, _, _ := plugin(t, tc.script)
		_, s := source(t, ec, execplugin.Options{})
		_, err := s.Get(context.Background())
		if !errors.Is(err, execplugin.ErrFailed) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: got %v, want %q", tc.script, err, tc.want)
		}
	}
	_, s := source(t, &clientcmdapi.ExecConfig{APIVersion: v1, Command: "mcr-no-such-plugin"}, execplugin.Options{})
	if _, err := s.Get(context.Background()); err == nil || !strings.Contains(err.Error(), `"mcr-no-such-plugin" of member "fleet/east" cannot be started: executable file not found`) {
		t.Errorf("missing command: %v", err)
	}
}

func TestCloseKillsRunningPlugin(t *testing.T) {
	ec, _, marker := plugin(t, `sleep 3600`)
	_, s := source(t, ec, execplugin.Options{Timeout: time.Hour})
	errs := make(chan error, 1)
	go func() {
		_, err := s.Get(context.Background())
		errs <- err
	}()
	providertest.Eventually(t, 30*time.Second, "the plugin runs", func() error {
		if p, _ := providertest.ProcessesWithEnv(marker); len(p) < 2 {
			return fmt.Errorf("processes %q", p)
		}
		return nil
	})
	s.Close()
	if err := <-errs; !errors.Is(err, execplugin.ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	providertest.NoProcessesWithEnv(t, marker, 10*time.Second)
	if _, err := s.Get(context.Background()); !errors.Is(err, execplugin.ErrClosed) {
		t.Errorf("Get of a closed Source: %v", err)
	}
}

func TestSingleFlight(t *testing.T) {
	ec, dir, _ := plugin(t, `sleep 1; `+tokenScript("t", ""))
	_, s := source(t, ec, execplugin.Options{})

	// A waiter that gives up does not end the run for the others.
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.Get(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("impatient waiter: %v", err)
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if c, err := s.Get(context.Background()); err != nil || c.Token != "t" {
				t.Errorf("got %v, %v", c, err)
			}
		})
	}
	wg.Wait()
	if n := runs(t, dir); n != 1 {
		t.Errorf("the plugin ran %d times, want once", n)
	}
}

func TestExpiryRefresh(t *testing.T) {
	ec, dir, _ := plugin(t, tokenScript("t", "2030-01-01T00:00:00Z"))
	_, s := source(t, ec, execplugin.Options{})
	now := time.Date(2029, 12, 31, 23, 0, 0, 0, time.UTC)
	execplugin.SetClock(s, func() time.Time { return now })
	for range 3 {
		if _, err := s.Get(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := runs(t, dir); n != 1 {
		t.Fatalf("before expiry: %d runs, want 1", n)
	}
	now = now.Add(2 * time.Hour)
	for range 2 {
		if _, err := s.Get(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := runs(t, dir); n != 3 {
		t.Fatalf("after expiry: %d runs, want 3 (each Get finds the credential expired)", n)
	}
}

func TestUnauthorizedRefreshesOnce(t *testing.T) {
	// The first run answers a token the server refuses, later runs one it accepts.
	ec, dir, _ := plugin(t, `if [ -e "$STATE/runs" ]; then tok=good; else tok=bad; fi
`+tokenScript("$tok", ""))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	cfg, s, err := execplugin.Config(context.Background(), &rest.Config{Host: srv.URL, ExecProvider: ec, TLSClientConfig: rest.TLSClientConfig{
		CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}}, execplugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var codes []int
	for range 3 {
		res, err := client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		codes = append(codes, res.StatusCode)
	}
	if fmt.Sprint(codes) != "[401 200 200]" || runs(t, dir) != 2 {
		t.Errorf("codes %v after %d runs, want [401 200 200] after 2", codes, runs(t, dir))
	}
}

func TestClientCertificate(t *testing.T) {
	certPEM, keyPEM := clientCert(t, "plugin-user")
	cred, err := json.Marshal(map[string]any{"apiVersion": v1, "kind": "ExecCredential",
		"status": map[string]string{"clientCertificateData": string(certPEM), "clientKeyData": string(keyPEM)}})
	if err != nil {
		t.Fatal(err)
	}
	ec, _, _ := plugin(t, `printf '%s' "$CRED"`)
	ec.Env = append(ec.Env, clientcmdapi.ExecEnvVar{Name: "CRED", Value: string(cred)})

	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = fmt.Fprint(w, r.TLS.PeerCertificates[0].Subject.CommonName, " ", r.Header.Get("Authorization"))
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	srv.StartTLS()
	defer srv.Close()
	cfg, s, err := execplugin.Config(context.Background(), &rest.Config{Host: srv.URL, ExecProvider: ec, TLSClientConfig: rest.TLSClientConfig{
		CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}}, execplugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	body := make([]byte, 100)
	n, _ := res.Body.Read(body)
	if res.StatusCode != http.StatusOK || string(body[:n]) != "plugin-user " {
		t.Errorf("answer %d %q, want the certificate's user and no Authorization header", res.StatusCode, body[:n])
	}
}

// clientCert returns a self-signed client certificate for cn and its key, in PEM.
func clientCert(t *testing.T, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	certPEM, keyPEM, err := envtest.SelfSignedClientCertificate(cn)
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, keyPEM
}
