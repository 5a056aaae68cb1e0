// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package plugin

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	clientauthenticationv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
)

// The fuzz targets of the parsers of what others write: the ExecCredential request client-go
// hands a plugin (built from a ClusterProfile), the bearer tokens a plugin reads (JWT expiry),
// and the ExecCredential answer client-go reads back. Seeds are in testdata/fuzz/<FuzzName>;
// `go test -run=^$ -fuzz=^FuzzX$` runs one.

// fuzzMarker is a credential planted in the fuzzed input: no error may quote it.
const fuzzMarker = "fuzz-secret-3c9f1b7e"

// FuzzParseRequest: KUBERNETES_EXEC_INFO never makes the plugin panic; an accepted request has a
// supported apiVersion, Server gives a trimmed, non-empty URL or an error, and DecodeConfig
// decodes the config or fails.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"cluster":{"server":"https://east.example:6443","certificate-authority-data":"Y2E=","config":{"clusterName":"east"}},"interactive":false}}`,
		`{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","spec":{"cluster":{"server":" ","config":null}}}`,
		`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{}}`,
		`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"cluster":{"server":"x","config":{"clusterName":"e","secretName":"` + fuzzMarker + `","x":1}}}}`,
		`{"apiVersion":"v2","kind":"ExecCredential"}`,
		`{"kind":"Other"}`,
		`[]`, ` `, `null`, `{"spec":{"cluster":{"config":"` + fuzzMarker + `"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := ParseRequest(data)
		if err != nil {
			return
		}
		if !strings.Contains(strings.Join(APIVersions, " "), req.APIVersion) || req.APIVersion == "" {
			t.Fatalf("accepted apiVersion %q", req.APIVersion)
		}
		if s, err := req.Server(); err == nil && (s == "" || s != strings.TrimSpace(s)) {
			t.Fatalf("Server() = %q", s)
		}
		var cfg struct {
			ClusterName string `json:"clusterName"`
			SecretName  string `json:"secretName"`
		}
		if err := req.DecodeConfig(&cfg); err != nil && strings.Contains(err.Error(), fuzzMarker) {
			t.Fatalf("DecodeConfig error quotes a value: %v", err)
		}
		var anything any
		_ = req.DecodeConfig(&anything)
	})
}

// jwt makes a token of the three parts, the payload base64url-encoded.
func jwt(payload string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"RS256","kid":"k"}`)) + "." + enc.EncodeToString([]byte(payload)) + ".c2ln"
}

// FuzzTokenExpiry (seed "regression-year-10000": a token expiring after the year 9999 made the
// plugin write an answer client-go cannot decode): TokenExpiry never panics on any token; it reads back the exp claim of a
// well-formed JWT (none after the year 9999); an expiry it returns is positive; the expiry of a token valid now is not in the
// past, capped or not; and Write encodes it so that client-go reads back the same instant.
func FuzzTokenExpiry(f *testing.F) {
	f.Add("", int64(0), "")
	f.Add(jwt(`{"exp":1767323045,"sub":"system:serviceaccount:a:b"}`), int64(1767323045), `,"iat":1`)
	f.Add(jwt(`{"exp":1.5e9}`), int64(-1), `,"exp":2`)
	f.Add(jwt(`{"exp":"1767323045"}`), int64(4102444800), ``)
	f.Add(jwt(`{"exp":253402300800}`), int64(253402300799), ``)
	f.Add(jwt(`{"exp":9223372036854775807}`), int64(9223372036854775807), ``)
	f.Add("a.b.c", int64(1), `}`)
	f.Add("a."+base64.StdEncoding.EncodeToString([]byte(`{"exp":1}`))+"==.c", int64(0), ``)
	f.Fuzz(func(t *testing.T, token string, exp int64, extra string) {
		now := time.Now()
		check := func(token string, got time.Time) {
			if got.IsZero() {
				return
			}
			if got.Unix() <= 0 {
				t.Fatalf("TokenExpiry(%q) = %v, not after the epoch", token, got)
			}
			if got.After(now) {
				if capped := Earliest(got, now.Add(time.Hour)); !capped.After(now) {
					t.Fatalf("Earliest(%v, now+1h) = %v, in the past", got, capped)
				}
			}
			// The answer of the plugin carries the expiry as RFC 3339; client-go must read the
			// same instant back, or refuse the answer of a plugin with a valid token.
			var buf bytes.Buffer
			if err := Write(&buf, APIVersions[0], Credential{Token: fuzzMarker, Expiration: got}); err != nil {
				if strings.Contains(err.Error(), fuzzMarker) {
					t.Fatalf("Write error quotes the token: %v", err)
				}
				t.Fatalf("Write of the expiry %v of token %q: %v", got, token, err)
			}
			var ec clientauthenticationv1.ExecCredential
			if err := json.Unmarshal(buf.Bytes(), &ec); err != nil {
				t.Fatalf("the answer for the expiry %v of token %q does not decode: %v\n%s", got, token, err, buf.Bytes())
			}
			if ec.Status == nil || ec.Status.ExpirationTimestamp == nil || !ec.Status.ExpirationTimestamp.Time.Equal(got) {
				t.Fatalf("the answer for the expiry %v carries %v", got, ec.Status)
			}
		}
		check(token, TokenExpiry(token))

		// A well-formed JWT with that exp claim.
		tok := jwt(`{"exp":` + strconv.FormatInt(exp, 10) + extra + `}`)
		got := TokenExpiry(tok)
		if extra == "" {
			valid := exp > 0 && exp <= maxExpiry.Unix()
			if valid && !got.Equal(time.Unix(exp, 0)) {
				t.Fatalf("TokenExpiry(exp %d) = %v, want %v", exp, got, time.Unix(exp, 0))
			}
			if !valid && !got.IsZero() {
				t.Fatalf("TokenExpiry(exp %d) = %v, want none", exp, got)
			}
			if valid && exp > now.Unix() && !got.After(now) {
				t.Fatalf("a token valid until %d expires at %v, in the past", exp, got)
			}
		}
		check(tok, got)
	})
}

// FuzzWrite: Write never panics; what it writes decodes back into the credential it was given
// (seed "regression-year-10000": an expiry after the year 9999 used to be written as a timestamp
// client-go cannot decode); its errors never quote the credential.
func FuzzWrite(f *testing.F) {
	f.Add("client.authentication.k8s.io/v1", fuzzMarker, "", "", int64(1767323045))
	f.Add("client.authentication.k8s.io/v1beta1", "", "-----BEGIN CERTIFICATE-----\n"+fuzzMarker, fuzzMarker, int64(0))
	f.Add("client.authentication.k8s.io/v1", "", fuzzMarker, "", int64(-1))
	f.Add("v2", fuzzMarker, "", "", int64(1))
	f.Add("client.authentication.k8s.io/v1", "\xff\"\\"+fuzzMarker, "", "", int64(253402300800))
	f.Fuzz(func(t *testing.T, apiVersion, token, cert, key string, expUnix int64) {
		c := Credential{Token: token, ClientCertificateData: cert, ClientKeyData: key}
		if expUnix != 0 {
			c.Expiration = time.Unix(expUnix, 0)
		}
		var buf bytes.Buffer
		if err := Write(&buf, apiVersion, c); err != nil {
			for _, secret := range []string{token, cert, key} {
				if len(secret) >= 8 && strings.Contains(err.Error(), secret) {
					t.Fatalf("the error quotes a credential: %v", err)
				}
			}
			if strings.Contains(err.Error(), fuzzMarker) && !strings.Contains(apiVersion, fuzzMarker) {
				t.Fatalf("the error quotes a credential: %v", err)
			}
			if buf.Len() != 0 {
				t.Fatalf("Write failed (%v) after writing %q", err, buf.Bytes())
			}
			return
		}
		var ec clientauthenticationv1.ExecCredential
		if err := json.Unmarshal(buf.Bytes(), &ec); err != nil {
			t.Fatalf("the answer does not decode: %v\n%s", err, buf.Bytes())
		}
		if ec.APIVersion != apiVersion || ec.Kind != Kind || ec.Status == nil {
			t.Fatalf("the answer is %+v", ec)
		}
		// JSON replaces every byte of invalid UTF-8 with U+FFFD.
		fix := func(s string) string { return string([]rune(s)) }
		if ec.Status.Token != fix(token) || ec.Status.ClientCertificateData != fix(cert) || ec.Status.ClientKeyData != fix(key) {
			t.Fatalf("the answer carries other credentials: %+v", ec.Status)
		}
		switch exp := ec.Status.ExpirationTimestamp; {
		case c.Expiration.IsZero() && exp != nil:
			t.Fatalf("an answer without expiry carries %v", exp)
		case !c.Expiration.IsZero() && (exp == nil || !exp.Time.Equal(c.Expiration)):
			t.Fatalf("the answer for the expiry %v carries %v", c.Expiration, exp)
		}
	})
}
