// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"mcr.dev/core/envtest"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
)

// leakMarker is the secret planted in every credential field. It is valid base64 (so it can be
// the body of a PEM block) and valid in URLs, tokens and passwords.
const leakMarker = "M4rk3rS3cr3t"

// quoteConfig, as a member's UserAgent, makes the RESTOptions of TestEngineNeverReportsCredentials
// fail with an error that quotes the member's credentials.
const quoteConfig = "quote-config"

// kubeconfigProvider is the smallest provider that reads kubeconfigs, as the kubeconfig, file
// and clusterapi providers do: the test sets each member's kubeconfig (or, as providers that
// build configs from other fields do, its rest.Config) and queues its name.
type kubeconfigProvider struct {
	kit.Members[string]
	engine  *kit.Engine[string]
	desired kit.Desired[string, memberSource]
	events  *safeRecorder

	mu   sync.Mutex
	errs []error // every error the provider got from kubeconfig.Load
}

// memberSource is a member's kubeconfig, or its rest.Config.
type memberSource struct {
	kubeconfig []byte
	config     *rest.Config
}

func newKubeconfigProvider(t *testing.T, opts kit.Options) *kubeconfigProvider {
	t.Helper()
	p := &kubeconfigProvider{events: &safeRecorder{}}
	opts.EventRecorder = p.events
	opts.RetryMinDelay, opts.RetryMaxDelay = 50*time.Millisecond, 500*time.Millisecond
	e, err := p.Init(kit.EngineOptions[string]{Name: "kubeconfig-test-provider", Options: opts, Sync: p.sync})
	if err != nil {
		t.Fatal(err)
	}
	p.engine = e
	return p
}

func (p *kubeconfigProvider) sync(ctx context.Context, name string) kit.Result {
	regarding := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: name}}
	src, ok := p.desired.Get(name)
	if !ok {
		p.engine.Disengage(multicluster.ClusterName(name), regarding, "its kubeconfig is gone")
		return kit.Result{}
	}
	m := kit.Member{Name: multicluster.ClusterName(name), Config: src.config, Regarding: regarding, From: "kubeconfig Secret fleet/" + name}
	if m.Config == nil {
		cfg, err := kubeconfig.Load(src.kubeconfig, p.engine.Options().Policy)
		if err != nil {
			p.mu.Lock()
			p.errs = append(p.errs, err)
			p.mu.Unlock()
			return p.engine.Fail(name, m, kit.Permanent(kit.ReasonInvalidKubeconfig, err))
		}
		m.Config = cfg
	}
	return p.engine.Engage(ctx, name, m)
}

func (p *kubeconfigProvider) set(name string, src *memberSource) {
	if src == nil {
		p.desired.Delete(name)
	} else {
		p.desired.Set(name, *src)
	}
	p.engine.Add(name)
}

// loadErrors returns the errors of kubeconfig.Load so far.
func (p *kubeconfigProvider) loadErrors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, err := range p.errs {
		out = append(out, err.Error())
	}
	return out
}

// waitReasonCount waits until name has n Events with reason.
func waitReasonCount(t *testing.T, r *safeRecorder, name, reason string, n int) {
	t.Helper()
	providertest.Eventually(t, time.Minute, fmt.Sprintf("%d %s Events on %s", n, reason, name), func() error {
		got := 0
		for _, r := range r.of(name) {
			if r == reason {
				got++
			}
		}
		if got < n {
			return fmt.Errorf("Events so far: %v", r.of(name))
		}
		return nil
	})
}

// memberKubeconfig returns a kubeconfig for server, trusting member's CA, with the user that
// user makes and the cluster fields that cluster sets.
func memberKubeconfig(t *testing.T, member *envtest.Member, server string, cluster func(*clientcmdapi.Cluster), user func(admin *rest.Config, u *clientcmdapi.AuthInfo)) *memberSource {
	t.Helper()
	admin := member.Config()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["k"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: admin.CAData}
	if cluster != nil {
		cluster(cfg.Clusters["k"])
	}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{}
	user(admin, cfg.AuthInfos["u"])
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "k", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &memberSource{kubeconfig: data}
}

// execPlugin makes u get the member's admin certificate from an exec plugin (sh printing an
// ExecCredential held in an environment variable), with the marker in an argument and in
// another variable.
func execPlugin(t *testing.T, admin *rest.Config, u *clientcmdapi.AuthInfo, extraArg string) {
	t.Helper()
	cred, err := json.Marshal(map[string]any{
		"apiVersion": "client.authentication.k8s.io/v1",
		"kind":       "ExecCredential",
		"status":     map[string]string{"clientCertificateData": string(admin.CertData), "clientKeyData": string(admin.KeyData)},
	})
	if err != nil {
		t.Fatal(err)
	}
	u.Exec = &clientcmdapi.ExecConfig{
		APIVersion:      "client.authentication.k8s.io/v1",
		Command:         "sh",
		Args:            []string{"-c", `printf '%s' "$MCR_TEST_CREDENTIAL"`, leakMarker + extraArg},
		Env:             []clientcmdapi.ExecEnvVar{{Name: "MCR_TEST_CREDENTIAL", Value: string(cred)}, {Name: "MCR_TEST_MARKER", Value: leakMarker}},
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}
}

// TestEngineNeverReportsCredentials plants a marker secret in every field of a member's
// credentials (URL user info and query, bearer token, client key, basic-auth password, exec
// arguments and environment, proxy password) and drives the member through engage, rotation,
// refusal, unreachability and removal on real API servers: the marker must appear in no log
// line, no Event and no error.
func TestEngineNeverReportsCredentials(t *testing.T) {
	fleet := envtest.StartForTest(t, "east", "down")
	east, down := fleet.Member("east"), fleet.Member("down")
	if err := down.Stop(); err != nil {
		t.Fatal(err)
	}

	var logs providertest.LogBuffer
	p := newKubeconfigProvider(t, kit.Options{
		Logger:           logs.Logger(),
		CacheSyncTimeout: 5 * time.Second,
		Policy:           kubeconfig.Policy{AllowExec: true, AllowExecEnv: "MCR_TEST_*", AllowProxyURL: true},
		// An option whose error quotes the config, as errors of client-go and of providers'
		// own requests quote URLs: what the kit reports of it must be redacted.
		RESTOptions: []func(*rest.Config) error{func(cfg *rest.Config) error {
			if cfg.UserAgent == quoteConfig {
				return fmt.Errorf(`Get "%s/api?timeout=32s": token %s, password %s refused`, cfg.Host, cfg.BearerToken, cfg.Password)
			}
			return nil
		}},
	})
	run := providertest.Start(t, p, time.Minute)
	ev := p.events

	// Engage with an exec plugin whose arguments and environment hold the marker.
	p.set("east", memberKubeconfig(t, east, east.Host(), nil, func(admin *rest.Config, u *clientcmdapi.AuthInfo) { execPlugin(t, admin, u, "") }))
	first := run.Recorder.WaitEngaged(t, p, "east", time.Minute)
	waitReasonCount(t, ev, "east", kit.ReasonClusterEngaged, 1)

	// Rotate to inline certificates.
	p.set("east", memberKubeconfig(t, east, east.Host(), nil, func(admin *rest.Config, u *clientcmdapi.AuthInfo) {
		u.ClientCertificateData, u.ClientKeyData = admin.CertData, admin.KeyData
	}))
	run.Recorder.WaitReengaged(t, p, "east", first, time.Minute)
	waitReasonCount(t, ev, "east", kit.ReasonCredentialsRotated, 1)

	// Refused credentials, one field after the other; an engaged instance stays.
	steps := []struct {
		what   string
		src    *memberSource
		reason string
	}{
		{"bearer token", memberKubeconfig(t, east, east.Host(), nil, func(_ *rest.Config, u *clientcmdapi.AuthInfo) { u.Token = leakMarker }),
			kit.ReasonUnauthorized},
		{"client key", memberKubeconfig(t, east, east.Host(), nil, func(admin *rest.Config, u *clientcmdapi.AuthInfo) {
			u.ClientCertificateData = admin.CertData
			u.ClientKeyData = []byte("-----BEGIN EC PRIVATE KEY-----\n" + leakMarker + "\n-----END EC PRIVATE KEY-----\n")
		}), kit.ReasonClusterSetupFailed},
		// The API server ignores basic auth and takes the request for an anonymous one, which
		// the access check refuses for a config that has credentials.
		{"basic-auth password", memberKubeconfig(t, east, east.Host(), nil, func(_ *rest.Config, u *clientcmdapi.AuthInfo) {
			u.Username, u.Password = "admin", leakMarker
		}), kit.ReasonUnauthorized},
		{"server user info and query", memberKubeconfig(t, east, strings.Replace(east.Host(), "https://", "https://admin:"+leakMarker+"@", 1)+"/?token="+leakMarker, nil,
			func(_ *rest.Config, u *clientcmdapi.AuthInfo) { u.Token = leakMarker }), kit.ReasonInvalidKubeconfig},
		{"rest.Config host user info and query", &memberSource{config: &rest.Config{
			Host:            strings.Replace(east.Host(), "https://", "https://admin:"+leakMarker+"@", 1) + "/?token=" + leakMarker,
			BearerToken:     leakMarker,
			TLSClientConfig: rest.TLSClientConfig{CAData: east.Config().CAData},
		}}, kit.ReasonClusterSetupFailed},
		{"an error quoting the config", &memberSource{config: &rest.Config{
			Host:            strings.Replace(east.Host(), "https://", "https://admin:"+leakMarker+"@", 1) + "/?token=" + leakMarker,
			BearerToken:     leakMarker,
			Password:        leakMarker + "-password",
			UserAgent:       quoteConfig,
			TLSClientConfig: rest.TLSClientConfig{CAData: east.Config().CAData},
		}}, kit.ReasonClusterSetupFailed},
		{"exec environment refused", memberKubeconfig(t, east, east.Host(), nil, func(admin *rest.Config, u *clientcmdapi.AuthInfo) {
			execPlugin(t, admin, u, "-refused")
			u.Exec.Env = append(u.Exec.Env, clientcmdapi.ExecEnvVar{Name: "LD_PRELOAD", Value: "/tmp/" + leakMarker + ".so"})
		}), kit.ReasonInvalidKubeconfig},
		{"exec plugin whose output is the marker", memberKubeconfig(t, east, east.Host(), nil, func(admin *rest.Config, u *clientcmdapi.AuthInfo) {
			execPlugin(t, admin, u, "-output")
			u.Exec.Args[1] = `printf '%s' "$MCR_TEST_MARKER"`
		}), kit.ReasonCredentialPluginFailed},
	}
	want := map[string]int{kit.ReasonCredentialsRotated: 1}
	for _, step := range steps {
		p.set("east", step.src)
		want[step.reason]++
		waitReasonCount(t, ev, "east", step.reason, want[step.reason])
		if !p.engine.IsEngaged("east") {
			t.Fatalf("%s: the working member was disengaged", step.what)
		}
	}

	// Unreachable: a stopped member, and a proxy (with the marker as its password) that does
	// not answer.
	p.set("down", memberKubeconfig(t, down, down.Host(), nil, func(_ *rest.Config, u *clientcmdapi.AuthInfo) { u.Token = leakMarker }))
	p.set("proxied", memberKubeconfig(t, east, east.Host(), func(c *clientcmdapi.Cluster) {
		c.ProxyURL = "http://proxy-user:" + leakMarker + "@127.0.0.1:1"
	}, func(admin *rest.Config, u *clientcmdapi.AuthInfo) {
		u.ClientCertificateData, u.ClientKeyData = admin.CertData, admin.KeyData
	}))
	waitReason(t, ev, "down", kit.ReasonClusterUnreachable)
	waitReason(t, ev, "proxied", kit.ReasonClusterUnreachable)

	// Removal, then the provider stops.
	engaged, _ := run.Recorder.Latest("east")
	for _, name := range []string{"east", "down", "proxied"} {
		p.set(name, nil)
	}
	run.Recorder.WaitDisengaged(t, p, "east", engaged, time.Minute)
	waitReason(t, ev, "east", kit.ReasonClusterDisengaged)
	run.Stop()

	// The test saw what it meant to: problems were logged and recorded, with their reasons.
	if len(logs.All("cannot be engaged")) < len(steps) || len(p.loadErrors()) == 0 {
		t.Fatalf("too few problems logged (%d) or no Load error: %q", len(logs.All("cannot be engaged")), logs.Lines())
	}
	for _, kind := range []string{"Unauthorized", "URLData", "ExecEnv", "ClusterUnreachable"} {
		if len(logs.All(kind)) == 0 {
			t.Errorf("no log line with %s", kind)
		}
	}
	var texts []string
	texts = append(texts, logs.Lines()...)
	texts = append(texts, ev.all()...)
	texts = append(texts, p.loadErrors()...)
	for _, text := range texts {
		if strings.Contains(text, leakMarker) {
			t.Errorf("a credential leaked: %s", text)
		}
	}
	if t.Failed() {
		for _, text := range texts {
			t.Log(text)
		}
	}
}
