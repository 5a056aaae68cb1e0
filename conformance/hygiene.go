// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/url"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"mcr.dev/core/envtest"
)

// ReportSource is implemented by harnesses of providers that claim CredentialHygiene.
type ReportSource interface {
	// Reports returns what the provider instances of the harness have reported so far: every
	// line of their log output and the text (reason, note or message) of every Event they
	// recorded. Wire the provider's logger to a buffer (mcr.dev/core/providers/providertest's
	// LogBuffer will do) and list the Events where the provider records them.
	Reports(ctx context.Context) ([]string, error)
}

// plantedSecret is a credential the suite put into a kubeconfig, and the forms in which it
// would show if reported.
type plantedSecret struct {
	what  string
	forms []string
}

// secretKubeconfig returns a kubeconfig for the unresponsive server u with planted
// credentials: a bearer token and a client certificate and key, and, if inURL, a password and
// a token in the server URL.
func secretKubeconfig(u *unresponsiveServer, name string, inURL bool) ([]byte, []plantedSecret, error) {
	token := "mcr-planted-token-" + randomToken() + randomToken()
	certPEM, keyPEM, err := envtest.SelfSignedClientCertificate("mcr-conformance")
	if err != nil {
		return nil, nil, err
	}
	server := u.srv.URL
	secrets := []plantedSecret{
		{what: "the bearer token", forms: []string{token}},
		{what: "the client key", forms: pemForms(keyPEM)},
	}
	if inURL {
		password := "mcr-planted-password-" + randomToken()
		query := "mcr-planted-query-token-" + randomToken()
		su, err := url.Parse(server)
		if err != nil {
			return nil, nil, err
		}
		su.User = url.UserPassword("conformance", password)
		su.RawQuery = url.Values{"access_token": {query}}.Encode()
		server = su.String()
		secrets = append(secrets,
			plantedSecret{what: "the password in the server URL", forms: []string{password}},
			plantedSecret{what: "the token in the server URL's query", forms: []string{query}})
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: u.srv.Certificate().Raw})
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token, ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("writing a kubeconfig: %w", err)
	}
	return data, secrets, nil
}

// pemForms returns the forms in which a PEM block shows when reported: the base64 of the whole
// PEM (as in a kubeconfig's client-key-data) and each full line of its body.
func pemForms(p []byte) []string {
	forms := []string{base64.StdEncoding.EncodeToString(p)}
	for _, line := range strings.Split(string(p), "\n") {
		if len(line) >= 40 && !strings.HasPrefix(line, "-----") {
			forms = append(forms, line)
		}
	}
	return forms
}

func testNoCredentialsReported(s *spec) {
	source, ok := s.h.(ReportSource)
	if !ok {
		s.erroredf("the provider claims %s, but the harness (%T) does not implement ReportSource", CredentialHygiene, s.h)
	}
	if _, ok := s.h.(UnresponsiveMemberCreator); !ok {
		s.erroredf("the provider claims %s, but the harness (%T) does not implement UnresponsiveMemberCreator", CredentialHygiene, s.h)
	}
	in := s.start()
	var planted []plantedSecret
	kubeconfig := func(u *unresponsiveServer, id string, inURL bool) []byte {
		data, secrets, err := secretKubeconfig(u, id, inURL)
		if err != nil {
			s.erroredf("%v", err)
		}
		planted = append(planted, secrets...)
		return data
	}
	// A working member (its engagement is reported too); a member whose apiserver rejects its
	// credentials (401), which then get rotated; one whose server URL carries credentials (a
	// provider should refuse it, and say why, without quoting it); then both deleted: every
	// path on which a provider reports on a member.
	s.waitEngaged(in, s.create("creds-ok"))
	rejecting := s.newUnresponsive(true)
	id := newMemberName("creds-401")
	denied := s.addWithKubeconfig(id, kubeconfig(rejecting, id, false))
	urlID := newMemberName("creds-url")
	inURL := s.addWithKubeconfig(urlID, kubeconfig(s.newUnresponsive(false), urlID, true))
	s.wait(s.opts.Timeouts.Stable, func() bool { return false })
	s.writeKubeconfig(id, kubeconfig(rejecting, id, false))
	s.wait(s.opts.Timeouts.Stable, func() bool { return false })
	s.delete(denied)
	s.delete(inURL)
	s.wait(s.opts.Timeouts.Stable, func() bool { return false })

	ctx, cancel := s.harnessCtx()
	reports, err := source.Reports(ctx)
	cancel()
	if err != nil {
		s.erroredf("harness: Reports: %v", err)
	}
	if len(reports) == 0 {
		s.erroredf("harness: Reports returned nothing; the provider logged and recorded nothing the suite can check (wire its logger to the harness)")
	}
	var found []string
	for _, secret := range planted {
		for _, line := range reports {
			if form := containsAny(line, secret.forms); form != "" {
				found = append(found, fmt.Sprintf("%s in %q", secret.what, redactForm(line, form)))
				break
			}
		}
	}
	if len(found) > 0 {
		s.failf("the provider reported credentials of members (%d report lines checked): %s", len(reports), strings.Join(found, "; "))
	}
}

func containsAny(line string, forms []string) string {
	for _, f := range forms {
		if strings.Contains(line, f) {
			return f
		}
	}
	return ""
}

// redactForm cuts a report line down for the failure message, with the secret replaced.
func redactForm(line, form string) string {
	line = strings.ReplaceAll(line, form, "<SECRET>")
	if len(line) > 300 {
		i := max(strings.Index(line, "<SECRET>")-150, 0)
		line = "…" + line[i:min(i+300, len(line))] + "…"
	}
	return line
}
