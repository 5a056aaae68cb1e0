// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package plugin_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientauthenticationv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	clientauthenticationv1beta1 "k8s.io/client-go/pkg/apis/clientauthentication/v1beta1"

	"mcr.dev/providers/clusterprofile/plugin"
)

// request encodes an ExecCredential request the way client-go does.
func request(t *testing.T, apiVersion string, cluster *clientauthenticationv1.Cluster) string {
	t.Helper()
	ec := clientauthenticationv1.ExecCredential{Spec: clientauthenticationv1.ExecCredentialSpec{Cluster: cluster}}
	ec.APIVersion, ec.Kind = apiVersion, plugin.Kind
	data, err := json.Marshal(ec)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func member() *clientauthenticationv1.Cluster {
	return &clientauthenticationv1.Cluster{
		Server:                   "https://east.example:6443",
		CertificateAuthorityData: []byte("ca"),
		Config:                   runtime.RawExtension{Raw: []byte(`{"clusterName":"east"}`)},
	}
}

func TestParseRequest(t *testing.T) {
	for _, v := range plugin.APIVersions {
		req, err := plugin.ParseRequest([]byte(request(t, v, member())))
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if req.APIVersion != v {
			t.Errorf("APIVersion = %q, want %q", req.APIVersion, v)
		}
		server, err := req.Server()
		if err != nil || server != "https://east.example:6443" {
			t.Errorf("Server() = %q, %v", server, err)
		}
		var cfg struct {
			ClusterName string `json:"clusterName"`
		}
		if err := req.DecodeConfig(&cfg); err != nil || cfg.ClusterName != "east" {
			t.Errorf("DecodeConfig: %+v, %v", cfg, err)
		}
	}
	for what, data := range map[string]string{
		"empty":            "",
		"not JSON":         "{",
		"wrong kind":       `{"apiVersion":"client.authentication.k8s.io/v1","kind":"Pod"}`,
		"unknown version":  `{"apiVersion":"client.authentication.k8s.io/v2","kind":"ExecCredential"}`,
		"alpha is refused": `{"apiVersion":"client.authentication.k8s.io/v1alpha1","kind":"ExecCredential"}`,
	} {
		if _, err := plugin.ParseRequest([]byte(data)); err == nil {
			t.Errorf("%s: accepted", what)
		}
	}
}

func TestRequestWithoutClusterOrConfig(t *testing.T) {
	req, err := plugin.ParseRequest([]byte(request(t, plugin.APIVersions[0], nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := req.Server(); err == nil || !strings.Contains(err.Error(), "provideClusterInfo") {
		t.Errorf("Server() without cluster: %v, want a hint at provideClusterInfo", err)
	}
	var v map[string]any
	if err := req.DecodeConfig(&v); err == nil {
		t.Error("DecodeConfig without cluster: no error")
	}
	noConfig := member()
	noConfig.Config = runtime.RawExtension{}
	req, err = plugin.ParseRequest([]byte(request(t, plugin.APIVersions[0], noConfig)))
	if err != nil {
		t.Fatal(err)
	}
	if err := req.DecodeConfig(&v); err == nil || !strings.Contains(err.Error(), "client.authentication.k8s.io/exec") {
		t.Errorf("DecodeConfig without config: %v, want a hint at the exec extension", err)
	}
	// Unknown fields are errors, so that a misspelled setting is not silently ignored.
	req, err = plugin.ParseRequest([]byte(request(t, plugin.APIVersions[0], member())))
	if err != nil {
		t.Fatal(err)
	}
	var strict struct {
		Name string `json:"name"`
	}
	if err := req.DecodeConfig(&strict); err == nil {
		t.Error("DecodeConfig accepted an unknown field")
	}
}

func TestWriteIsReadableByClientGoTypes(t *testing.T) {
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	var buf bytes.Buffer
	if err := plugin.Write(&buf, "client.authentication.k8s.io/v1", plugin.Credential{Token: "t0k3n", Expiration: exp}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(buf.String(), "}\n") {
		t.Errorf("output %q does not end with a newline", buf.String())
	}
	var v1 clientauthenticationv1.ExecCredential
	if err := json.Unmarshal(buf.Bytes(), &v1); err != nil {
		t.Fatal(err)
	}
	if v1.APIVersion != "client.authentication.k8s.io/v1" || v1.Kind != "ExecCredential" || v1.Status == nil ||
		v1.Status.Token != "t0k3n" || !v1.Status.ExpirationTimestamp.Time.Equal(exp) {
		t.Errorf("decoded %+v", v1)
	}

	buf.Reset()
	if err := plugin.Write(&buf, "client.authentication.k8s.io/v1beta1", plugin.Credential{ClientCertificateData: "cert", ClientKeyData: "key"}); err != nil {
		t.Fatal(err)
	}
	var beta clientauthenticationv1beta1.ExecCredential
	if err := json.Unmarshal(buf.Bytes(), &beta); err != nil {
		t.Fatal(err)
	}
	if beta.APIVersion != "client.authentication.k8s.io/v1beta1" || beta.Status.ClientKeyData != "key" || beta.Status.ExpirationTimestamp != nil {
		t.Errorf("decoded %+v", beta)
	}

	for what, c := range map[string]plugin.Credential{
		"nothing":          {},
		"certificate only": {ClientCertificateData: "cert"},
		"key only":         {Token: "t", ClientKeyData: "key"},
	} {
		if err := plugin.Write(&bytes.Buffer{}, plugin.APIVersions[0], c); err == nil {
			t.Errorf("%s: accepted", what)
		}
	}
	if err := plugin.Write(&bytes.Buffer{}, "v1", plugin.Credential{Token: "t"}); err == nil {
		t.Error("an unknown apiVersion was accepted")
	}
}

func jwt(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(claims)) + "." + enc([]byte("sig"))
}

func TestTokenExpiry(t *testing.T) {
	if got := plugin.TokenExpiry(jwt(`{"exp": 1893456000, "sub": "x"}`)); !got.Equal(time.Unix(1893456000, 0)) {
		t.Errorf("TokenExpiry = %v", got)
	}
	for what, tok := range map[string]string{
		"opaque":      "abcdef",
		"no exp":      jwt(`{"sub":"x"}`),
		"bad payload": "a.!!!.c",
		"exp string":  jwt(`{"exp":"soon"}`),
	} {
		if got := plugin.TokenExpiry(tok); !got.IsZero() {
			t.Errorf("%s: TokenExpiry = %v, want zero", what, got)
		}
	}
	a, b := time.Unix(100, 0), time.Unix(200, 0)
	if got := plugin.Earliest(time.Time{}, b, a); !got.Equal(a) {
		t.Errorf("Earliest = %v, want %v", got, a)
	}
	if got := plugin.Earliest(time.Time{}); !got.IsZero() {
		t.Errorf("Earliest of zeros = %v", got)
	}
}

func TestRun(t *testing.T) {
	env := map[string]string{plugin.ExecInfoEnv: request(t, "client.authentication.k8s.io/v1", member())}
	var stdout, stderr bytes.Buffer
	pio := plugin.IO{Getenv: func(k string) string { return env[k] }, Stdout: &stdout, Stderr: &stderr}
	code := plugin.Run(context.Background(), "test", func(_ context.Context, req *plugin.Request) (plugin.Credential, error) {
		return plugin.Credential{Token: "tok-for-" + req.Cluster.Server}, nil
	}, pio)
	if code != 0 || stderr.Len() != 0 || !strings.Contains(stdout.String(), `"token":"tok-for-https://east.example:6443"`) {
		t.Errorf("code %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}

	stdout.Reset()
	code = plugin.Run(context.Background(), "test", func(context.Context, *plugin.Request) (plugin.Credential, error) {
		return plugin.Credential{}, errors.New("no token for you")
	}, pio)
	if code != 1 || stdout.Len() != 0 || stderr.String() != "[test] no token for you\n" {
		t.Errorf("failure: code %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}

	stderr.Reset()
	env = map[string]string{}
	called := false
	code = plugin.Run(context.Background(), "test", func(context.Context, *plugin.Request) (plugin.Credential, error) {
		called = true
		return plugin.Credential{Token: "x"}, nil
	}, pio)
	if code != 1 || called || !strings.Contains(stderr.String(), plugin.ExecInfoEnv) {
		t.Errorf("without exec info: code %d, called %t, stderr %q", code, called, stderr.String())
	}
}
