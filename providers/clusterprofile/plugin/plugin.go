// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package plugin

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientauthenticationv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
)

// ExecInfoEnv is the environment variable through which client-go hands the ExecCredential
// request to a plugin.
const ExecInfoEnv = "KUBERNETES_EXEC_INFO"

// Kind is the kind of the objects exchanged with client-go.
const Kind = "ExecCredential"

// APIVersions are the ExecCredential API versions a plugin built with this package speaks.
// Both share the JSON shape this package reads and writes.
var APIVersions = []string{"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"}

// Request is what client-go asks a plugin for: the ExecCredential of KUBERNETES_EXEC_INFO.
type Request struct {
	// APIVersion is the version client-go speaks; the answer must use the same.
	APIVersion string
	// Cluster is the member the credentials are for. It is nil unless the provider's
	// execConfig sets provideClusterInfo: true.
	Cluster *clientauthenticationv1.Cluster
	// Interactive is true when client-go lets the plugin use stdin; ClusterProfile access
	// providers always run plugins non-interactively.
	Interactive bool
}

// ParseRequest decodes an ExecCredential request as client-go writes it into KUBERNETES_EXEC_INFO.
func ParseRequest(data []byte) (*Request, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s is empty: the plugin must be run by client-go", ExecInfoEnv)
	}
	var ec clientauthenticationv1.ExecCredential
	if err := json.Unmarshal(data, &ec); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", ExecInfoEnv, err)
	}
	if ec.Kind != Kind {
		return nil, fmt.Errorf("%s has kind %q, want %q", ExecInfoEnv, ec.Kind, Kind)
	}
	if !slices.Contains(APIVersions, ec.APIVersion) {
		return nil, fmt.Errorf("%s has apiVersion %q, want one of %v", ExecInfoEnv, ec.APIVersion, APIVersions)
	}
	return &Request{APIVersion: ec.APIVersion, Cluster: ec.Spec.Cluster, Interactive: ec.Spec.Interactive}, nil
}

// ReadRequest reads the request from the KUBERNETES_EXEC_INFO variable of getenv (os.Getenv when
// nil).
func ReadRequest(getenv func(string) string) (*Request, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	return ParseRequest([]byte(getenv(ExecInfoEnv)))
}

// errNoCluster is returned when the request carries no cluster.
var errNoCluster = errors.New("the request has no spec.cluster: set provideClusterInfo: true in the execConfig of the access provider")

// Server returns the member's API server URL, or an error when the request does not say.
func (r *Request) Server() (string, error) {
	if r.Cluster == nil {
		return "", errNoCluster
	}
	if s := strings.TrimSpace(r.Cluster.Server); s != "" {
		return s, nil
	}
	return "", errors.New("the request has no spec.cluster.server")
}

// DecodeConfig decodes spec.cluster.config, the ClusterProfile's client.authentication.k8s.io/exec
// extension, into v, refusing unknown fields so that a misspelled setting is an error rather than
// ignored. It fails when the request carries no cluster or no config.
func (r *Request) DecodeConfig(v any) error {
	if r.Cluster == nil {
		return errNoCluster
	}
	raw := r.Cluster.Config.Raw
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return errors.New("the request has no spec.cluster.config: the ClusterProfile's access provider needs a client.authentication.k8s.io/exec extension")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decoding spec.cluster.config: %w", err)
	}
	return nil
}

// Credential is what a plugin answers: a bearer token, or a PEM client certificate and key.
type Credential struct {
	Token                 string
	ClientCertificateData string
	ClientKeyData         string
	// Expiration, when not zero, is when client-go must run the plugin again.
	Expiration time.Time
}

func (c Credential) validate() error {
	hasCert := c.ClientCertificateData != "" || c.ClientKeyData != ""
	switch {
	case c.Token == "" && !hasCert:
		return errors.New("the credential has neither a token nor a client certificate")
	case hasCert && (c.ClientCertificateData == "" || c.ClientKeyData == ""):
		return errors.New("the credential has only half of a client certificate and key")
	}
	return nil
}

// Write writes c as an ExecCredential of apiVersion (one of APIVersions), followed by a newline.
func Write(w io.Writer, apiVersion string, c Credential) error {
	if !slices.Contains(APIVersions, apiVersion) {
		return fmt.Errorf("unsupported apiVersion %q, want one of %v", apiVersion, APIVersions)
	}
	if err := c.validate(); err != nil {
		return err
	}
	status := &clientauthenticationv1.ExecCredentialStatus{
		Token:                 c.Token,
		ClientCertificateData: c.ClientCertificateData,
		ClientKeyData:         c.ClientKeyData,
	}
	if !c.Expiration.IsZero() {
		if y := c.Expiration.UTC().Year(); y < 0 || y > 9999 {
			return fmt.Errorf("the expiration %s cannot be encoded: RFC 3339 has four-digit years", c.Expiration.UTC().Format(time.RFC3339))
		}
		exp := metav1.NewTime(c.Expiration.UTC())
		status.ExpirationTimestamp = &exp
	}
	data, err := json.Marshal(&clientauthenticationv1.ExecCredential{
		TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: Kind},
		Status:   status,
	})
	if err != nil {
		return fmt.Errorf("encoding the ExecCredential: %w", err)
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// maxExpiry is the latest expiry an ExecCredential can carry: RFC 3339 has four-digit years.
var maxExpiry = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// TokenExpiry returns the expiry (the "exp" claim) of a JWT bearer token, such as a Kubernetes
// ServiceAccount token, or the zero time when the token is not a JWT or has no expiry (or one
// after the year 9999, which an ExecCredential cannot carry). The signature is not checked: the
// result only tells client-go when to ask again.
func TokenExpiry(token string) time.Time {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp *json.Number `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.Exp == nil {
		return time.Time{}
	}
	secs, err := claims.Exp.Int64()
	if err != nil || secs <= 0 || secs > maxExpiry.Unix() {
		return time.Time{}
	}
	return time.Unix(secs, 0)
}

// Earliest returns the earliest of the non-zero times, or the zero time if there is none; handy
// to cap a token's own expiry with a refresh interval.
func Earliest(times ...time.Time) time.Time {
	var out time.Time
	for _, t := range times {
		if !t.IsZero() && (out.IsZero() || t.Before(out)) {
			out = t
		}
	}
	return out
}

// GetCredential obtains the credential for a request.
type GetCredential func(ctx context.Context, req *Request) (Credential, error)

// IO is the process environment Run works with; tests substitute their own.
type IO struct {
	Getenv func(string) string
	Stdout io.Writer
	Stderr io.Writer
}

// Run reads the request, calls get and writes its credential, and returns the process exit
// code: 0, or 1 after printing "[name] message" to stderr.
func Run(ctx context.Context, name string, get GetCredential, pio IO) int {
	fail := func(err error) int {
		fmt.Fprintf(pio.Stderr, "[%s] %v\n", name, err)
		return 1
	}
	req, err := ReadRequest(pio.Getenv)
	if err != nil {
		return fail(err)
	}
	cred, err := get(ctx, req)
	if err != nil {
		return fail(err)
	}
	// Encode first, so that a failure never leaves half an answer on stdout.
	var buf bytes.Buffer
	if err := Write(&buf, req.APIVersion, cred); err != nil {
		return fail(err)
	}
	if _, err := pio.Stdout.Write(buf.Bytes()); err != nil {
		return fail(fmt.Errorf("writing the ExecCredential: %w", err))
	}
	return 0
}

// Main runs the plugin with the process's environment, stdout and stderr, with a context that
// ends on SIGINT or SIGTERM, and exits with Run's code.
func Main(name string, get GetCredential) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, name, get, IO{Getenv: os.Getenv, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
