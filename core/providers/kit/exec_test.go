// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
)

// execPolicy lets members run plugins given by path, with the test's variables in their env.
var execPolicy = kubeconfig.Policy{AllowExec: true, AllowLocalFiles: true, AllowExecEnv: "MCR_TEST_*"}

// credentialJSON is the ExecCredential a good plugin prints, with status.
func credentialJSON(t *testing.T, status map[string]string) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": status})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// pluginMember returns a kubeconfig for member whose user is the shell script body, written
// to dir; the plugin's env holds marker (for providertest.ProcessesWithEnv) and, as
// MCR_TEST_CREDENTIAL, credential.
func pluginMember(t *testing.T, member *envtest.Member, dir, name, body, marker, credential string) *memberSource {
	t.Helper()
	path := filepath.Join(dir, name+".sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return memberKubeconfig(t, member, member.Host(), nil, func(_ *rest.Config, u *clientcmdapi.AuthInfo) {
		u.Exec = &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1", Command: path, InteractiveMode: clientcmdapi.IfAvailableExecInteractiveMode,
			Env: []clientcmdapi.ExecEnvVar{{Name: "MCR_TEST_PLUGIN", Value: marker}, {Name: "MCR_TEST_CREDENTIAL", Value: credential},
				{Name: "MCR_TEST_STATE", Value: dir}},
		}
	})
}

// serviceAccountToken returns a token of a ServiceAccount of member.
func serviceAccountToken(t *testing.T, member *envtest.Member) string {
	t.Helper()
	data, err := member.ServiceAccountKubeconfig(context.Background(), envtest.ServiceAccountOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range cfg.AuthInfos {
		if u.Token != "" {
			return u.Token
		}
	}
	t.Fatal("the ServiceAccount kubeconfig has no token")
	return ""
}

// newExecProvider is newKubeconfigProvider with an errors metric.
func newExecProvider(t *testing.T, opts kit.Options) (*kubeconfigProvider, *prometheus.CounterVec) {
	t.Helper()
	p := &kubeconfigProvider{events: &safeRecorder{}}
	errs := kit.NewErrorsMetric("exec-test-provider")
	opts.EventRecorder = p.events
	opts.RetryMinDelay, opts.RetryMaxDelay = 50*time.Millisecond, 500*time.Millisecond
	e, err := p.Init(kit.EngineOptions[string]{Name: "exec-test-provider", Options: opts, Sync: p.sync, Errors: errs})
	if err != nil {
		t.Fatal(err)
	}
	p.engine = e
	return p, errs
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(fds)
}

// TestExecPluginsBoundedOnRealAPIServers engages members whose exec credential plugins hang
// (in a child, so that only killing the process group ends it), flood stdout with 200 MiB,
// crash, answer slowly, or answer a ServiceAccount token or a client certificate, all for one
// real API server: the good ones engage next to the bad ones, the bad ones are reported (Event,
// metric, fleet status, one log line each without the plugin's output), the heap stays far
// below what the flood wrote, and once the provider stopped no plugin process, goroutine or
// file descriptor is left.
func TestExecPluginsBoundedOnRealAPIServers(t *testing.T) {
	fleet := envtest.StartForTest(t, "east")
	east := fleet.Member("east")
	admin := east.Config()
	token := serviceAccountToken(t, east)
	dir := t.TempDir()
	marker := providertest.Marker("plugin")
	const secret = "PluginOutputS3cret"

	members := map[string]*memberSource{
		"token": pluginMember(t, east, dir, "token", `printf '%s' "$MCR_TEST_CREDENTIAL"`, marker,
			credentialJSON(t, map[string]string{"token": token})),
		"cert": pluginMember(t, east, dir, "cert", `printf '%s' "$MCR_TEST_CREDENTIAL"`, marker,
			credentialJSON(t, map[string]string{"clientCertificateData": string(admin.CertData), "clientKeyData": string(admin.KeyData)})),
		"slow": pluginMember(t, east, dir, "slow", `sleep 2; printf '%s' "$MCR_TEST_CREDENTIAL"`, marker,
			credentialJSON(t, map[string]string{"token": token})),
		"hang":  pluginMember(t, east, dir, "hang", `echo `+secret+`; sleep 3600`, marker, ""),
		"flood": pluginMember(t, east, dir, "flood", `head -c 209715200 /dev/zero | tr '\0' x`, marker, ""),
		"crash": pluginMember(t, east, dir, "crash", `echo `+secret+` >&2; echo `+secret+`; exit 3`, marker, ""),
	}
	bad := map[string]string{
		"hang":  `exec credential plugin "hang.sh" of member "hang" did not answer within 3s`,
		"flood": `exec credential plugin "flood.sh" of member "flood" wrote more than 1 MiB to stdout`,
		"crash": `exec credential plugin "crash.sh" of member "crash" exited with status 3`,
	}

	goroutines := testcheck.SettledGoroutines()
	fds := openFDs(t)
	heap := heapInUse()

	var logs providertest.LogBuffer
	p, errs := newExecProvider(t, kit.Options{Logger: logs.Logger(), Policy: execPolicy, CacheSyncTimeout: 30 * time.Second, ExecTimeout: 3 * time.Second})
	run := providertest.Start(t, p, 30*time.Second)
	for name, src := range members {
		p.set(name, src)
	}
	for _, name := range []string{"token", "cert", "slow"} {
		run.Recorder.WaitEngaged(t, p, multicluster.ClusterName(name), time.Minute)
	}
	// The members answer as their plugins' users: the ServiceAccount may list namespaces and
	// not Secrets, the certificate is the admin's.
	ctx := context.Background()
	tokenCluster, err := p.Get(ctx, "token")
	if err != nil {
		t.Fatal(err)
	}
	if err := tokenCluster.GetAPIReader().List(ctx, &corev1.NamespaceList{}); err != nil {
		t.Errorf("token member: listing namespaces: %v", err)
	}
	if err := tokenCluster.GetAPIReader().List(ctx, &corev1.SecretList{}, client.InNamespace("default")); err == nil {
		t.Error("token member: listing Secrets worked, want the ServiceAccount's RBAC to refuse it")
	}
	certCluster, err := p.Get(ctx, "cert")
	if err != nil {
		t.Fatal(err)
	}
	if err := certCluster.GetAPIReader().List(ctx, &corev1.SecretList{}, client.InNamespace("default")); err != nil {
		t.Errorf("cert member: listing Secrets as the admin: %v", err)
	}

	for name, want := range bad {
		waitReason(t, p.events, name, kit.ReasonCredentialPluginFailed)
		waitReasonCount(t, p.events, name, kit.ReasonCredentialPluginFailed, 1)
		if p.engine.IsEngaged(multicluster.ClusterName(name)) {
			t.Errorf("%s is engaged", name)
		}
		found := false
		for _, ev := range p.events.all() {
			if strings.HasPrefix(ev, name+" ") && strings.Contains(ev, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("no Event on %s with %q: %q", name, want, p.events.all())
		}
		if msg := p.FleetStatus().Failing[multicluster.ClusterName(name)]; !strings.Contains(msg, want) {
			t.Errorf("fleet status of %s: %q, want %q", name, msg, want)
		}
	}
	// Retried with backoff: each bad member fails again, and is logged once.
	providertest.Eventually(t, time.Minute, "retries of the bad members", func() error {
		if n := testutil.ToFloat64(errs.WithLabelValues(kit.ReasonCredentialPluginFailed)); n < 6 {
			return fmt.Errorf("%v CredentialPluginFailed counted", n)
		}
		return nil
	})
	for name := range bad {
		if n := len(logs.All(`"msg"="Cluster cannot be engaged"`, `"cluster"="`+name+`"`)); n != 1 {
			t.Errorf("%s logged %d times, want once: %q", name, n, logs.Lines())
		}
	}
	grown := int64(heapInUse()) - int64(heap)
	if grown > 64<<20 {
		t.Errorf("the heap grew by %d MiB while a plugin wrote 200 MiB at each retry", grown>>20)
	}
	t.Logf("heap growth with the plugins retried: %.1f MiB", float64(grown)/(1<<20))
	for _, text := range append(logs.Lines(), p.events.all()...) {
		if strings.Contains(text, secret) || strings.Contains(text, token) {
			t.Errorf("the plugin's output was reported: %s", text)
		}
	}

	run.Stop()
	providertest.NoProcessesWithEnv(t, marker, 10*time.Second)
	testcheck.WaitForGoroutines(t, goroutines+10, time.Minute)
	providertest.Eventually(t, time.Minute, "file descriptors closed", func() error {
		if n := openFDs(t); n > fds+5 {
			return fmt.Errorf("%d file descriptors open, %d before the provider started", n, fds)
		}
		return nil
	})
}

// TestExecPluginKilledWhenMemberGoesOrProviderStops: a plugin that runs while its member is
// disengaged is killed with its children, and so is one that runs when the provider stops;
// Start returns in time although neither plugin would ever answer on its own.
func TestExecPluginKilledWhenMemberGoesOrProviderStops(t *testing.T) {
	fleet := envtest.StartForTest(t, "east")
	east := fleet.Member("east")
	token := serviceAccountToken(t, east)
	dir := t.TempDir()
	goneMarker, stopMarker := providertest.Marker("gone"), providertest.Marker("stop")

	// The first run answers a token that expires at once; every later run hangs.
	expiring := credentialJSON(t, map[string]string{"token": token, "expirationTimestamp": time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)})
	onceThenHang := `if [ -e "$MCR_TEST_STATE/ran" ]; then sleep 3600; fi
touch "$MCR_TEST_STATE/ran"; printf '%s' "$MCR_TEST_CREDENTIAL"`

	p, _ := newExecProvider(t, kit.Options{Policy: execPolicy, CacheSyncTimeout: time.Hour, ExecTimeout: time.Hour})
	run := providertest.Start(t, p, 15*time.Second)
	p.set("gone", pluginMember(t, east, dir, "gone", onceThenHang, goneMarker, expiring))
	engaged := run.Recorder.WaitEngaged(t, p, "gone", time.Minute)

	// A request after the token expired runs the plugin again, which hangs.
	time.Sleep(2 * time.Second)
	listed := make(chan error, 1)
	go func() { listed <- engaged.Cluster.GetAPIReader().List(context.Background(), &corev1.NamespaceList{}) }()
	waitProcesses(t, goneMarker)
	p.set("gone", nil)
	run.Recorder.WaitDisengaged(t, p, "gone", engaged, time.Minute)
	providertest.NoProcessesWithEnv(t, goneMarker, 10*time.Second)
	if err := <-listed; err == nil || !strings.Contains(err.Error(), "disengaged") {
		t.Errorf("the request waiting for the plugin: %v", err)
	}

	// A member whose plugin hangs from the start, while the provider stops.
	stopDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(stopDir, "ran"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p.set("stop", pluginMember(t, east, stopDir, "stop", onceThenHang, stopMarker, expiring))
	waitProcesses(t, stopMarker)
	start := time.Now()
	run.Stop() // fails the test if Start takes more than 15s
	t.Logf("Start returned %s after its context ended, with a plugin hanging", time.Since(start))
	providertest.NoProcessesWithEnv(t, stopMarker, 10*time.Second)
}

// waitProcesses waits until a plugin with marker in its env and the child it waits for run.
func waitProcesses(t *testing.T, marker string) {
	t.Helper()
	providertest.Eventually(t, time.Minute, "the plugin and its child run", func() error {
		if procs, err := providertest.ProcessesWithEnv(marker); err != nil || len(procs) < 2 {
			return fmt.Errorf("processes %q, %v", procs, err)
		}
		return nil
	})
}
