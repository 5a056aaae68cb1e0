// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package execplugin

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// FuzzDecode feeds the ExecCredential decoder arbitrary plugin output. Whatever a plugin writes,
// decoding does not panic, an error never repeats the output (a plugin's answer is a secret),
// and a credential it accepts can authenticate: a token, or a certificate with its key.
func FuzzDecode(f *testing.F) {
	const secret = "s3cr3t-t0k3n-value"
	f.Add([]byte(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"`+secret+`"}}`), true)
	f.Add([]byte(`{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"`+secret+`","expirationTimestamp":"2030-01-01T00:00:00Z"}}`), false)
	f.Add([]byte(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"`+secret+`","clientKeyData":"`+secret+`"}}`), true)
	f.Add([]byte(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}}`), true)
	f.Add([]byte(`{"apiVersion":"v1","kind":"Secret","data":{"token":"`+secret+`"}}`), true)
	f.Add([]byte("apiVersion: client.authentication.k8s.io/v1\nkind: ExecCredential\nstatus:\n  token: "+secret), true)
	f.Add([]byte(secret), false)
	f.Fuzz(func(t *testing.T, out []byte, v1 bool) {
		gv := schema.GroupVersion{Group: "client.authentication.k8s.io", Version: "v1beta1"}
		if v1 {
			gv.Version = "v1"
		}
		s := &Source{opts: Options{Member: "member"}, command: "plugin"}
		cred, err := s.decode(gv, out)
		if err != nil {
			if cred != nil {
				t.Fatal("decode returned a credential with its error")
			}
			// The message is one of a few fixed sentences: it neither carries the secret nor grows
			// with the output.
			msg := err.Error()
			if strings.Contains(msg, secret) || len(msg) > 200 {
				t.Fatalf("the error %q repeats the plugin's output", msg)
			}
			if !IsSourceError(err) {
				t.Fatalf("the error %q is not a plugin error", msg)
			}
			return
		}
		if cred.Token == "" && cred.Cert == nil {
			t.Fatal("decode accepted a credential without a token or a certificate")
		}
		if cred.Cert != nil && cred.Cert.Leaf == nil {
			t.Fatal("decode accepted a certificate it did not parse")
		}
	})
}
