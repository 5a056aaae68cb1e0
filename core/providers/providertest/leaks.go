// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Marker returns a string that stands for a secret in a leak test: unique to the call, valid
// in URLs (user info, query), tokens, passwords, environment values and the body of a PEM block,
// and unlikely to appear anywhere by chance. label says which field it was planted in, so that a
// leak found later names its source.
func Marker(label string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, label)
	return "Mk" + clean + "S3cr3t" + hex.EncodeToString(b)
}

// LeakCheck collects what a provider reported to the outside world (log lines, Events, errors,
// metrics) and finds secrets in it: the proof behind "no credential is ever logged, put in an
// Event or returned in an error". A test plants markers (see Marker) in a member's credentials,
// drives the member through engage, failure, rotation and removal, scans what was reported and
// calls Check. The zero value is not usable; call NewLeakCheck. Safe for concurrent use.
type LeakCheck struct {
	mu      sync.Mutex
	markers []string
	scanned int
	leaks   []string
}

// NewLeakCheck returns a LeakCheck for markers (more can be added later).
func NewLeakCheck(markers ...string) *LeakCheck {
	c := &LeakCheck{}
	c.Add(markers...)
	return c
}

// Add adds secrets to look for; empty strings are ignored.
func (c *LeakCheck) Add(markers ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range markers {
		if m != "" {
			c.markers = append(c.markers, m)
		}
	}
}

// Scan looks for every marker in texts; where says what they are ("log", "Event", ...).
func (c *LeakCheck) Scan(where string, texts ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, text := range texts {
		c.scanned++
		for _, m := range c.markers {
			if strings.Contains(text, m) {
				c.leaks = append(c.leaks, fmt.Sprintf("%s: %s", where, text))
				break
			}
		}
	}
}

// ScanLogs scans every line of b.
func (c *LeakCheck) ScanLogs(b *LogBuffer) { c.Scan("log", b.Lines()...) }

// ScanError scans err's text; a nil err is skipped.
func (c *LeakCheck) ScanError(where string, err error) {
	if err != nil {
		c.Scan(where, err.Error())
	}
}

// ScanEvents scans every Event, in every namespace, of the API server cfg points to: all of its
// fields (note, reason, regarding, related, series), as JSON.
func (c *LeakCheck) ScanEvents(ctx context.Context, cfg *rest.Config) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("scanning Events: %w", err)
	}
	list, err := cs.EventsV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("scanning Events: %w", err)
	}
	for i := range list.Items {
		data, err := json.Marshal(&list.Items[i])
		if err != nil {
			return fmt.Errorf("scanning Events: %w", err)
		}
		c.Scan("Event", string(data))
	}
	return nil
}

// ScanMetrics scans the text exposition of everything g gathers (names, labels, help).
func (c *LeakCheck) ScanMetrics(g prometheus.Gatherer) error {
	families, err := g.Gather()
	if err != nil {
		return fmt.Errorf("scanning metrics: %w", err)
	}
	var buf bytes.Buffer
	for _, f := range families {
		buf.Reset()
		if _, err := expfmt.MetricFamilyToText(&buf, f); err != nil {
			return fmt.Errorf("scanning metrics: %w", err)
		}
		c.Scan("metric", buf.String())
	}
	return nil
}

// Scanned returns how many texts were scanned so far, for a test that wants to show it looked
// at something.
func (c *LeakCheck) Scanned() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scanned
}

// Check fails t with every text that contains a marker, and fails it too when nothing was
// scanned (a leak test that looked at nothing proves nothing).
func (c *LeakCheck) Check(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.scanned == 0 {
		t.Error("leak check: nothing was scanned")
	}
	for _, l := range c.leaks {
		t.Errorf("a secret leaked: %s", l)
	}
}

// MarkedKubeconfig is a member kubeconfig with a marker planted in one credential field.
type MarkedKubeconfig struct {
	// Field names the field the marker is in ("bearer token", "server user info", ...).
	Field string
	// Kubeconfig is the kubeconfig, one cluster, user and context, the context current.
	Kubeconfig []byte
	// Reason is the kit's Event reason for this member under the default (hardened) policy:
	// kit.ReasonUnauthorized, kit.ReasonInvalidKubeconfig or kit.ReasonClusterSetupFailed
	// (spelled out here so that this package need not import the kit).
	Reason string
}

// MarkedKubeconfigs returns kubeconfigs for the API server of admin (its Host and CAData) with
// marker planted in each credential field a kubeconfig has: the server URL's user info and
// query, the bearer token, the basic-auth password, the client key, exec arguments and
// environment, auth-provider configuration and the proxy URL's password. None of them works:
// each is refused by the member or by the default kubeconfig policy, and each must be reported
// without the marker.
func MarkedKubeconfigs(admin *rest.Config, marker string) ([]MarkedKubeconfig, error) {
	withUserInfo := strings.Replace(admin.Host, "://", "://admin:"+marker+"@", 1)
	const (
		unauthorized = "Unauthorized"
		invalid      = "InvalidKubeconfig"
		setupFailed  = "ClusterSetupFailed"
	)
	variants := []struct {
		field, reason string
		server        string
		cluster       func(*clientcmdapi.Cluster)
		user          func(*clientcmdapi.AuthInfo)
	}{
		{field: "server user info", reason: invalid, server: withUserInfo,
			user: func(u *clientcmdapi.AuthInfo) { u.Token = "not-the-marker" }},
		{field: "server query", reason: invalid, server: admin.Host + "/?access_token=" + marker,
			user: func(u *clientcmdapi.AuthInfo) { u.Token = "not-the-marker" }},
		{field: "bearer token", reason: unauthorized,
			user: func(u *clientcmdapi.AuthInfo) { u.Token = marker }},
		// The API server ignores basic auth and takes the request for an anonymous one, which
		// the access check refuses for a config that has credentials.
		{field: "basic-auth password", reason: unauthorized,
			user: func(u *clientcmdapi.AuthInfo) { u.Username, u.Password = "admin", marker }},
		{field: "client key", reason: setupFailed, user: func(u *clientcmdapi.AuthInfo) {
			u.ClientCertificateData = admin.CertData
			u.ClientKeyData = []byte("-----BEGIN EC PRIVATE KEY-----\n" + marker + "\n-----END EC PRIVATE KEY-----\n")
		}},
		{field: "exec arguments and environment", reason: invalid, user: func(u *clientcmdapi.AuthInfo) {
			u.Exec = &clientcmdapi.ExecConfig{
				APIVersion: "client.authentication.k8s.io/v1", Command: "mcr-credential-helper",
				Args: []string{"--token", marker}, Env: []clientcmdapi.ExecEnvVar{{Name: "MCR_TOKEN", Value: marker}},
				InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
			}
		}},
		{field: "auth-provider configuration", reason: invalid, user: func(u *clientcmdapi.AuthInfo) {
			u.AuthProvider = &clientcmdapi.AuthProviderConfig{Name: "oidc", Config: map[string]string{"id-token": marker, "refresh-token": marker}}
		}},
		{field: "proxy URL password", reason: invalid,
			cluster: func(c *clientcmdapi.Cluster) { c.ProxyURL = "http://proxy-user:" + marker + "@127.0.0.1:1" },
			user:    func(u *clientcmdapi.AuthInfo) { u.Token = "not-the-marker" }},
	}
	out := make([]MarkedKubeconfig, 0, len(variants))
	for _, v := range variants {
		cfg := clientcmdapi.NewConfig()
		server := admin.Host
		if v.server != "" {
			server = v.server
		}
		cfg.Clusters["member"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: admin.CAData}
		if v.cluster != nil {
			v.cluster(cfg.Clusters["member"])
		}
		cfg.AuthInfos["member"] = &clientcmdapi.AuthInfo{}
		v.user(cfg.AuthInfos["member"])
		cfg.Contexts["member"] = &clientcmdapi.Context{Cluster: "member", AuthInfo: "member"}
		cfg.CurrentContext = "member"
		data, err := clientcmd.Write(*cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.field, err)
		}
		out = append(out, MarkedKubeconfig{Field: v.field, Kubeconfig: data, Reason: v.reason})
	}
	return out, nil
}

// MarkedKubeconfigs is the package's MarkedKubeconfigs with a marker of its own in each field,
// added to c, so that a leak names the field it came from.
func (c *LeakCheck) MarkedKubeconfigs(admin *rest.Config) ([]MarkedKubeconfig, error) {
	fields, err := MarkedKubeconfigs(admin, "placeholder")
	if err != nil {
		return nil, err
	}
	out := make([]MarkedKubeconfig, len(fields))
	for i, f := range fields {
		marker := Marker(f.Field)
		c.Add(marker)
		all, err := MarkedKubeconfigs(admin, marker)
		if err != nil {
			return nil, err
		}
		out[i] = all[i]
	}
	return out, nil
}

// MarkedPluginKubeconfigs returns kubeconfigs for the API server of admin whose exec credential
// plugin, a shell script written to dir, answers with a marker (each its own, added to c): as a
// token the member refuses, in output that is not JSON, in an ExecCredential that does not
// decode (the marker in the field client-go quotes when it cannot parse it), and in the output of
// a plugin that then fails. The command is a path, so the default policy refuses each twice
// over (an exec plugin, a local file): Reason is InvalidKubeconfig. A plugin's stderr is never
// read: the kit discards it.
func (c *LeakCheck) MarkedPluginKubeconfigs(admin *rest.Config, dir string) ([]MarkedKubeconfig, error) {
	const credential = `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":`
	var out []MarkedKubeconfig
	for i, v := range []struct{ field, script string }{
		{"exec plugin token", `echo '` + credential + `{"token":"MARKER"}}'`},
		{"exec plugin output not JSON", `echo 'token: MARKER'`},
		{"exec plugin output not decodable", `echo '` + credential + `{"token":"t","expirationTimestamp":"MARKER"}}'`},
		{"exec plugin failure", `echo 'cannot get a token' >&2; echo 'MARKER'; exit 1`},
	} {
		marker := Marker(v.field)
		c.Add(marker)
		path := filepath.Join(dir, fmt.Sprintf("mcr-credential-plugin-%d.sh", i))
		script := "#!/bin/sh\n" + strings.ReplaceAll(v.script, "MARKER", marker) + "\n"
		if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
			return nil, err
		}
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["member"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
		cfg.AuthInfos["member"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1", Command: path, InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}}
		cfg.Contexts["member"] = &clientcmdapi.Context{Cluster: "member", AuthInfo: "member"}
		cfg.CurrentContext = "member"
		data, err := clientcmd.Write(*cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.field, err)
		}
		out = append(out, MarkedKubeconfig{Field: v.field, Kubeconfig: data, Reason: "InvalidKubeconfig"})
	}
	return out, nil
}

// ProcessesWithEnv returns the processes of this user whose environment holds marker (for
// example a variable an exec credential plugin's env sets, which the processes it starts
// inherit), with their command lines: a test that runs plugins checks with it that none is
// left once the provider stopped or the member went. It reads /proc and finds nothing where
// there is none.
func ProcessesWithEnv(marker string) ([]string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	var found []string
	for _, e := range entries {
		pid := e.Name()
		if pid == "" || strings.Trim(pid, "0123456789") != "" {
			continue
		}
		// Processes of other users, and those that ended meanwhile, cannot be read.
		env, err := os.ReadFile(filepath.Join("/proc", pid, "environ"))
		if err != nil || !bytes.Contains(env, []byte(marker)) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		found = append(found, pid+": "+strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))))
	}
	return found, nil
}

// NoProcessesWithEnv fails t if a process whose environment holds marker still runs once
// timeout has passed (processes are reaped asynchronously; timeout only bounds a leak).
func NoProcessesWithEnv(t testing.TB, marker string, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, "no process with "+marker+" in its environment", func() error {
		left, err := ProcessesWithEnv(marker)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fmt.Errorf("processes left behind: %q", left)
		}
		return nil
	})
}
