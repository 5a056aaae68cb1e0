// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/client-go/util/retry"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterprofile"
)

// The test binary shares one fleet: "hub" carries the real ClusterProfile CRD of
// sigs.k8s.io/cluster-inventory-api and the token Secrets of the reference plugin; east, west
// and north are members. The reference plugin is built from cmd/ once and run by client-go's
// exec authenticator, as in production.
var (
	fleet  *envtest.Fleet
	hub    client.Client
	scheme = runtime.NewScheme()

	// pluginPath is the built cmd/clusterprofile-token-plugin.
	pluginPath string
	// hubKubeconfigPath is the kubeconfig the plugin reads token Secrets with.
	hubKubeconfigPath string
)

// tokenNamespace holds the token Secrets the plugin reads in the tests.
const tokenNamespace = "mcr-tokens"

// accessProviderName is the name of the reference plugin in the tests' provider file.
const accessProviderName = "mcr-token"

func TestMain(m *testing.M) {
	providertest.Main(m, providertest.MainOptions{Members: []string{"hub", "east", "west", "north"}, ListWithoutStreaming: true}, setUp)
}

// testDirPrefix names the directories that hold the built plugin and the hub kubeconfig.
const testDirPrefix = "clusterprofile-test-"

// setUp builds the plugin and prepares the hub of the fleet f.
func setUp(f *envtest.Fleet) error {
	fleet = f
	sb := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, v1alpha1.AddToScheme)
	if err := sb.AddToScheme(scheme); err != nil {
		return fmt.Errorf("scheme: %w", err)
	}
	removeStaleDirs()
	// envtest.Main exits the process when the tests are done, so this directory outlives
	// them; removeStaleDirs removes it on a later run.
	dir, err := os.MkdirTemp("", testDirPrefix)
	if err != nil {
		return fmt.Errorf("temp dir: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pluginPath = filepath.Join(dir, "clusterprofile-token-plugin")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", pluginPath, "./cmd/clusterprofile-token-plugin").CombinedOutput(); err != nil {
		return fmt.Errorf("building the plugin: %w: %s", err, out)
	}
	hostCfg := fleet.Member("hub").Config()
	if err := installCRD(ctx, hostCfg); err != nil {
		return fmt.Errorf("installing the ClusterProfile CRD: %w", err)
	}
	if hub, err = client.New(hostCfg, client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("hub client: %w", err)
	}
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tokenNamespace}}); err != nil {
		return fmt.Errorf("token namespace: %w", err)
	}
	hubKubeconfigPath = filepath.Join(dir, "hub.kubeconfig")
	if err := os.WriteFile(hubKubeconfigPath, fleet.Member("hub").Kubeconfig(), 0o600); err != nil {
		return fmt.Errorf("hub kubeconfig: %w", err)
	}
	return nil
}

// removeStaleDirs removes the directories of earlier test runs that are older than a day, so
// that a run still going elsewhere keeps its own.
func removeStaleDirs() {
	stale, _ := filepath.Glob(filepath.Join(os.TempDir(), testDirPrefix+"*"))
	for _, dir := range stale {
		if fi, err := os.Stat(dir); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
			_ = os.RemoveAll(dir)
		}
	}
}

// installCRD installs the ClusterProfile CRD shipped in the cluster-inventory-api module (the
// version the provider is built with) and waits until it is established.
func installCRD(ctx context.Context, cfg *rest.Config) error {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-inventory-api").Output()
	if err != nil {
		return fmt.Errorf("locating sigs.k8s.io/cluster-inventory-api: %w", err)
	}
	file := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "bases", "multicluster.x-k8s.io_clusterprofiles.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		return fmt.Errorf("decoding %s: %w", file, err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	return envtest.InstallCRDs(ctx, c, crd)
}

// waitTimeout bounds every wait for the provider to catch up with a change.
const waitTimeout = time.Minute

func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	providertest.Eventually(t, waitTimeout, what, check)
}

// providerFile is the operator's provider file of the tests: the reference plugin, reading
// token Secrets of tokenNamespace on the hub. extra is merged into the provider entry (e.g.
// policies).
func providerFile(extra string) string {
	return fmt.Sprintf(`{"providers": [{"name": %q,
  "execConfig": {"apiVersion": "client.authentication.k8s.io/v1", "command": %q,
    "args": ["-kubeconfig", %q, "-namespace", %q], "provideClusterInfo": true}%s}]}`,
		accessProviderName, pluginPath, hubKubeconfigPath, tokenNamespace, extra)
}

// accessConfig parses providerFile(extra) the way the flag helper does.
func accessConfig(t *testing.T, extra string) *access.Config {
	t.Helper()
	cfg, err := clusterprofile.ParseProviderFile([]byte(providerFile(extra)))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// namespace creates a namespace of its own on the hub for the test.
func namespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%s", nsCounter.Add(1), strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())))
	if len(name) > 50 {
		name = strings.TrimRight(name[:50], "-")
	}
	if err := hub.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

var nsCounter atomic.Int64

// started is a running provider.
type started struct {
	*providertest.Session
	provider *clusterprofile.Provider
	rec      *providertest.Recorder
	logs     *logBuffer
}

// start runs a provider on the hub, restricted to ns, until the test ends. Without a strategy in
// opts it uses the tests' provider file.
func start(t *testing.T, ns string, opts clusterprofile.Options) *started {
	t.Helper()
	logs := &logBuffer{}
	if len(opts.Namespaces) == 0 {
		opts.Namespaces = []string{ns}
	}
	if opts.AccessProviders == nil && opts.Secret == nil {
		opts.AccessProviders = accessConfig(t, "")
	}
	opts.Options = providertest.TestKitOptions(opts.Options, logs)
	p, err := clusterprofile.New(fleet.Member("hub").Config(), opts)
	if err != nil {
		t.Fatalf("clusterprofile.New: %v", err)
	}
	return runProvider(t, p, logs)
}

// runProvider starts p, which logs to logs, until the test ends.
func runProvider(t *testing.T, p *clusterprofile.Provider, logs *logBuffer) *started {
	t.Helper()
	s := providertest.StartSession(t, p, logs, waitTimeout)
	return &started{Session: s, provider: p, rec: s.Recorder, logs: logs}
}

// requireReaches fails unless the engaged cluster of name talks to member, with live requests.
func (s *started) requireReaches(t *testing.T, name multicluster.ClusterName, member string) {
	t.Helper()
	s.RequireReaches(t, name, fleet.Member(member).Host())
}

// memberToken mints a ServiceAccount token on member (read access to namespaces and ConfigMaps)
// for a ServiceAccount of that name, and returns it.
func memberToken(ctx context.Context, member, sa string) (string, error) {
	data, err := fleet.Member(member).ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{Name: sa})
	if err != nil {
		return "", err
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return "", err
	}
	if cfg.BearerToken == "" {
		return "", errors.New("ServiceAccount kubeconfig without a token")
	}
	return cfg.BearerToken, nil
}

func mustMemberToken(t *testing.T, member, sa string) string {
	t.Helper()
	tok, err := memberToken(t.Context(), member, sa)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// revokeToken deletes the ServiceAccount behind a memberToken, which invalidates its tokens.
func revokeToken(ctx context.Context, member, sa string) error {
	cl, err := client.New(fleet.Member(member).Config(), client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	return client.IgnoreNotFound(cl.Delete(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "mcr-system", Name: sa}}))
}

// writeTokenSecret creates or replaces the token Secret the plugin reads. server, when not
// empty, binds the token to that server.
func writeTokenSecret(ctx context.Context, name, token, server string) error {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: tokenNamespace, Name: name},
		Data:       map[string][]byte{"token": []byte(token)},
	}
	if server != "" {
		s.Data["server"] = []byte(server)
	}
	err := hub.Create(ctx, s)
	if apierrors.IsAlreadyExists(err) {
		err = hub.Update(ctx, s)
	}
	return err
}

// memberAccess returns the access provider entry of a profile whose cluster is member, with
// the exec extension config (e.g. {"clusterName": "x"}) and further extensions.
func memberAccess(member string, execConfig map[string]string, extensions ...clientcmdv1.NamedExtension) v1alpha1.AccessProvider {
	return accessFor(fleet.Member(member).Host(), fleet.Member(member).Config().CAData, execConfig, extensions...)
}

// accessFor returns the access provider entry of the reference plugin for a server.
func accessFor(server string, caData []byte, execConfig map[string]string, extensions ...clientcmdv1.NamedExtension) v1alpha1.AccessProvider {
	raw, err := json.Marshal(execConfig)
	if err != nil {
		panic(err)
	}
	exts := append([]clientcmdv1.NamedExtension{{Name: clusterprofile.ExecExtension, Extension: runtime.RawExtension{Raw: raw}}}, extensions...)
	return v1alpha1.AccessProvider{
		Name:    accessProviderName,
		Cluster: clientcmdv1.Cluster{Server: server, CertificateAuthorityData: caData, Extensions: exts},
	}
}

// createProfile creates a ClusterProfile and sets its status.
func createProfile(ctx context.Context, ns, name string, status v1alpha1.ClusterProfileStatus) error {
	cp := &v1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{v1alpha1.LabelClusterManagerKey: "test-manager"}},
		Spec:       v1alpha1.ClusterProfileSpec{ClusterManager: v1alpha1.ClusterManager{Name: "test-manager"}},
	}
	if err := hub.Create(ctx, cp); err != nil {
		return err
	}
	return updateStatus(ctx, client.ObjectKeyFromObject(cp), func(s *v1alpha1.ClusterProfileStatus) { *s = status })
}

func mustCreateProfile(t *testing.T, ns, name string, status v1alpha1.ClusterProfileStatus) {
	t.Helper()
	if err := createProfile(t.Context(), ns, name, status); err != nil {
		t.Fatalf("creating ClusterProfile %s/%s: %v", ns, name, err)
	}
}

// updateStatus changes a profile's status through the status subresource, as a cluster manager
// does.
func updateStatus(ctx context.Context, key client.ObjectKey, change func(*v1alpha1.ClusterProfileStatus)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cp := &v1alpha1.ClusterProfile{}
		if err := hub.Get(ctx, key, cp); err != nil {
			return err
		}
		change(&cp.Status)
		if cp.Status.Conditions == nil {
			cp.Status.Conditions = []metav1.Condition{}
		}
		return hub.Status().Update(ctx, cp)
	})
}

func mustUpdateStatus(t *testing.T, key client.ObjectKey, change func(*v1alpha1.ClusterProfileStatus)) {
	t.Helper()
	if err := updateStatus(t.Context(), key, change); err != nil {
		t.Fatalf("updating the status of %s: %v", key, err)
	}
}

// healthy sets or replaces the ControlPlaneHealthy condition.
func healthy(s *v1alpha1.ClusterProfileStatus, ok bool) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&s.Conditions, metav1.Condition{
		Type: v1alpha1.ClusterConditionControlPlaneHealthy, Status: status, Reason: "Probe", Message: "set by the test",
	})
}

// readyStatus is the status of a healthy profile reached through member with the token Secret
// secretName.
func readyStatus(member, clusterName, secretName string) v1alpha1.ClusterProfileStatus {
	var s v1alpha1.ClusterProfileStatus
	healthy(&s, true)
	cfg := map[string]string{"clusterName": clusterName}
	if secretName != "" {
		cfg["secretName"] = secretName
	}
	s.AccessProviders = []v1alpha1.AccessProvider{memberAccess(member, cfg)}
	return s
}

// events returns the Events of the given reason recorded on the profile ns/name.
func events(ctx context.Context, ns, name, reason string) ([]eventsv1.Event, error) {
	var list eventsv1.EventList
	if err := hub.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == "ClusterProfile" && e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out, nil
}

// waitEvent waits for an Event of reason on the profile whose note contains every part, and
// returns its note.
func waitEvent(t *testing.T, ns, name, reason string, parts ...string) string {
	t.Helper()
	return providertest.WaitEvent(t, hub, ns, providertest.EventTarget{Kind: "ClusterProfile", Name: name}, reason, waitTimeout, parts...)
}

// logBuffer collects log lines for assertions.
type logBuffer = providertest.LogBuffer
