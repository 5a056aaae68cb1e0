// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package credswap

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"strings"

	"k8s.io/client-go/rest"
)

// SameIdentity reports whether a and b authenticate as the same user, as far as can be told
// without asking the member: the subject of a JWT bearer token (a ServiceAccount token's
// system:serviceaccount:<namespace>:<name>), the subject of a client certificate, the user
// name of basic auth. Credentials whose identity cannot be read (an opaque token) count as the
// same: the caller cannot tell, and a member that maps them to another user answers the access
// check accordingly.
func SameIdentity(a, b *rest.Config) bool {
	ia, ib := identity(a), identity(b)
	return ia == "" || ib == "" || ia == ib
}

// identity names the user cfg's credentials stand for, "" when it cannot be read. It follows
// client-go's precedence: a token, then basic auth, then the client certificate.
func identity(cfg *rest.Config) string {
	token := cfg.BearerToken
	if token == "" && cfg.BearerTokenFile != "" {
		if data, err := os.ReadFile(cfg.BearerTokenFile); err == nil {
			token = strings.TrimSpace(string(data))
		}
	}
	switch {
	case token != "":
		if sub := jwtSubject(token); sub != "" {
			return "token:" + sub
		}
		return ""
	case cfg.Username != "":
		return "basic:" + cfg.Username
	}
	certPEM := cfg.CertData
	if len(certPEM) == 0 && cfg.CertFile != "" {
		certPEM, _ = os.ReadFile(cfg.CertFile)
	}
	if block, _ := pem.Decode(certPEM); block != nil {
		if cert, err := x509.ParseCertificate(block.Bytes); err == nil {
			return "x509:" + cert.Subject.String()
		}
	}
	return ""
}

// jwtSubject returns the unverified "sub" claim of a JWT, "" when token is not one. Only the
// subject is read; the token itself never leaves this function.
func jwtSubject(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Subject string `json:"sub"`
	}
	if json.Unmarshal(payload, &claims) != nil {
		return ""
	}
	return claims.Subject
}
