// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kcp"
	"mcr.dev/providers/kcp/internal/frontproxy"
)

// The test binary shares one fleet: "host" is the kcp workspace of the APIExport (the
// APIExportEndpointSlice CRD), east, west and north are the apiservers behind two shards of the
// APIExport's virtual workspace: shard A serves east and west, shard B serves north. Each
// apiserver is the home logical cluster of its name; tests put further logical clusters on them
// by annotating their objects with kcp.io/cluster (see package frontproxy).
var (
	fleet          *envtest.Fleet
	shardA, shardB *frontproxy.Server
	host           client.Client
	backends       = map[string]client.Client{}
	scheme         = runtime.NewScheme()
)

// token is the bearer token the shards require: the provider's access to the virtual workspace.
const token = "mcr-kcp-provider-test"

// exportName is the APIExport the test slices and bindings refer to.
const exportName = "mcr"

func TestMain(m *testing.M) {
	sb := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, apisv1alpha1.AddToScheme)
	if err := sb.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	providertest.Main(m, providertest.MainOptions{Members: []string{"host", "east", "west", "north"}, ListWithoutStreaming: true}, setUp)
}

// setUp installs the CRDs, builds the clients and starts the two shards, which live as long as
// the process.
func setUp(f *envtest.Fleet) error {
	fleet = f
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	wg.Go(func() {
		errs[0] = frontproxy.InstallCRDs(ctx, fleet.Member("host").Config(), frontproxy.APIExportEndpointSlicesCRD)
	})
	for i, name := range []string{"east", "west", "north"} {
		wg.Go(func() {
			errs[i+1] = frontproxy.InstallCRDs(ctx, fleet.Member(name).Config(), frontproxy.APIBindingsCRD)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("installing the CRDs: %w", err)
	}

	var err error
	if host, err = client.New(fleet.Member("host").Config(), client.Options{Scheme: scheme}); err != nil {
		return err
	}
	for _, name := range []string{"east", "west", "north"} {
		if backends[name], err = client.New(fleet.Member(name).Config(), client.Options{Scheme: scheme}); err != nil {
			return err
		}
	}
	if shardA, err = startShard(token, "east", "west"); err != nil {
		return err
	}
	shardB, err = startShard(token, "north")
	return err
}

// startShard starts a shard in front of the named backends that requires the bearer token tok.
func startShard(tok string, names ...string) (*frontproxy.Server, error) {
	opts := frontproxy.Options{Token: tok}
	for _, name := range names {
		opts.Backends = append(opts.Backends, frontproxy.Backend{Name: logicalcluster.Name(name), Config: fleet.Member(name).Config()})
	}
	return frontproxy.Start(opts)
}

// shardOf returns the shard that serves a backend.
func shardOf(backend string) *frontproxy.Server {
	if backend == "north" {
		return shardB
	}
	return shardA
}

// providerConfig is the provider's config: the host workspace, with the credentials the shards
// accept as well (the admin certificate for the host, the token for the shards) and all their
// CAs, as one kcp config reaches a workspace and its virtual workspaces.
func providerConfig() *rest.Config {
	cfg := fleet.Member("host").Config()
	cfg.BearerToken = token
	cfg.CAData = append(append(cfg.CAData, shardA.CAData()...), shardB.CAData()...)
	return cfg
}

// waitTimeout bounds every wait for the provider to catch up with a change.
const waitTimeout = time.Minute

// eventually polls cond until it returns nil, failing the test with its last error after
// waitTimeout.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	providertest.Eventually(t, waitTimeout, what, cond)
}

var seq atomic.Int64

// uniqueName returns a logical-cluster-valid name for the test, with a hint.
func uniqueName(t *testing.T, hint string) string {
	t.Helper()
	base := strings.ToLower(regexp.MustCompile(`[^a-zA-Z0-9]+`).ReplaceAllString(t.Name(), "-"))
	base = strings.TrimPrefix(base, "test")
	if len(base) > 30 {
		base = base[:30]
	}
	return strings.Trim(fmt.Sprintf("%s-%s-%d", strings.Trim(base, "-"), hint, seq.Add(1)), "-")
}

// newSlice creates an APIExportEndpointSlice listing urls and returns its name.
func newSlice(t *testing.T, urls ...string) string {
	t.Helper()
	slice := &apisv1alpha1.APIExportEndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: uniqueName(t, "slice")},
		Spec:       apisv1alpha1.APIExportEndpointSliceSpec{APIExport: apisv1alpha1.ExportBindingReference{Name: exportName}},
	}
	if err := host.Create(t.Context(), slice); err != nil {
		t.Fatalf("creating APIExportEndpointSlice: %v", err)
	}
	t.Cleanup(func() { _ = host.Delete(context.Background(), slice) })
	setEndpoints(t, slice.Name, urls...)
	return slice.Name
}

// setEndpoints writes the slice's status.endpoints, as kcp does when shards come and go.
func setEndpoints(t *testing.T, name string, urls ...string) {
	t.Helper()
	eventually(t, "writing the endpoints of slice "+name, func() error {
		slice := &apisv1alpha1.APIExportEndpointSlice{}
		if err := host.Get(t.Context(), client.ObjectKey{Name: name}, slice); err != nil {
			return err
		}
		slice.Status.APIExportEndpoints = nil
		for _, u := range urls {
			slice.Status.APIExportEndpoints = append(slice.Status.APIExportEndpoints, apisv1alpha1.APIExportEndpoint{URL: u})
		}
		return host.Status().Update(t.Context(), slice)
	})
}

// binding is an APIBinding on a backend, in logical cluster cluster.
type binding struct {
	backend, name string
	cluster       logicalcluster.Name
}

// newLogicalCluster makes a logical cluster named name on backend (reachable through the
// backend's shard) and binds the APIExport there with a ready APIBinding annotated with the
// workspace path, if any. Everything is removed when the test ends.
func newLogicalCluster(t *testing.T, backend, name, path string) binding {
	t.Helper()
	cluster := logicalcluster.Name(name)
	if err := shardOf(backend).AddCluster(cluster, logicalcluster.Name(backend)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shardOf(backend).RemoveCluster(cluster) })
	return newBinding(t, backend, cluster, name+"-binding", path, true)
}

// newBinding creates an APIBinding of the APIExport on backend, in logical cluster cluster
// (annotated with it unless it is the backend's home cluster), ready or not.
func newBinding(t *testing.T, backend string, cluster logicalcluster.Name, name, path string, ready bool) binding {
	t.Helper()
	obj := &apisv1alpha1.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{}},
		Spec: apisv1alpha1.APIBindingSpec{Reference: apisv1alpha1.BindingReference{
			Export: &apisv1alpha1.ExportBindingReference{Name: exportName},
		}},
	}
	if cluster.String() != backend {
		obj.Annotations[logicalcluster.AnnotationKey] = cluster.String()
	}
	if path != "" {
		obj.Annotations[kcp.PathAnnotation] = path
	}
	if err := backends[backend].Create(t.Context(), obj); err != nil {
		t.Fatalf("creating APIBinding %s on %s: %v", name, backend, err)
	}
	b := binding{backend: backend, name: name, cluster: cluster}
	t.Cleanup(func() { _ = b.delete(context.Background()) })
	b.setReady(t, ready)
	return b
}

// setReady sets the binding's Ready condition through the status subresource.
func (b binding) setReady(t *testing.T, ready bool) {
	t.Helper()
	if err := b.setReadyErr(t.Context(), ready); err != nil {
		t.Fatalf("setting the Ready condition of APIBinding %s: %v", b.name, err)
	}
}

func (b binding) setReadyErr(ctx context.Context, ready bool) error {
	status := corev1.ConditionFalse
	phase := apisv1alpha1.APIBindingPhaseBinding
	if ready {
		status, phase = corev1.ConditionTrue, apisv1alpha1.APIBindingPhaseBound
	}
	for {
		obj := &apisv1alpha1.APIBinding{}
		if err := backends[b.backend].Get(ctx, client.ObjectKey{Name: b.name}, obj); err != nil {
			return err
		}
		obj.Status.Phase = phase
		obj.Status.Conditions = conditionsv1alpha1.Conditions{{
			Type:               conditionsv1alpha1.ReadyCondition,
			Status:             status,
			LastTransitionTime: metav1.Now(),
		}}
		err := backends[b.backend].Status().Update(ctx, obj)
		if !apierrors.IsConflict(err) {
			return err
		}
	}
}

func (b binding) delete(ctx context.Context) error {
	obj := &apisv1alpha1.APIBinding{ObjectMeta: metav1.ObjectMeta{Name: b.name}}
	return client.IgnoreNotFound(backends[b.backend].Delete(ctx, obj))
}

// clusterClient is a client of a logical cluster through its shard's scoped path, as a user of
// the workspace would have: it bypasses the provider.
func clusterClient(t testing.TB, backend string, cluster logicalcluster.Name) client.Client {
	t.Helper()
	c, err := newClusterClient(backend, cluster)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newClusterClient(backend string, cluster logicalcluster.Name) (client.Client, error) {
	cfg := shardOf(backend).Config()
	cfg.Host += cluster.Path().RequestPath()
	return client.New(cfg, client.Options{Scheme: scheme})
}

// started is a running provider.
type started struct {
	provider *kcp.Provider
	rec      *providertest.Recorder
	logs     *logBuffer
}

// start runs a provider of the slice until the test ends, with short timeouts and retries.
func start(t *testing.T, slice string, opts kcp.Options) *started {
	t.Helper()
	return startWith(t, slice, opts, providertest.NewRecorder())
}

// startWith is start with a recorder of the caller's as the provider's Aware.
func startWith(t *testing.T, slice string, opts kcp.Options, rec *providertest.Recorder) *started {
	t.Helper()
	return startWithConfig(t, providerConfig(), slice, opts, rec)
}

// startWithConfig is startWith with the provider's config given.
func startWithConfig(t *testing.T, cfg *rest.Config, slice string, opts kcp.Options, rec *providertest.Recorder) *started {
	t.Helper()
	logs := &logBuffer{}
	if opts.CacheSyncTimeout == 0 {
		opts.CacheSyncTimeout = 20 * time.Second
	}
	if opts.RetryMinDelay == 0 {
		opts.RetryMinDelay = 100 * time.Millisecond
		opts.RetryMaxDelay = 2 * time.Second
	}
	opts.Logger = logs.Logger()
	p, err := kcp.New(cfg, slice, opts)
	if err != nil {
		t.Fatalf("kcp.New: %v", err)
	}
	providertest.RunInBackground(t, "provider Start", waitTimeout, func(ctx context.Context) error { return p.Start(ctx, rec) })
	return &started{provider: p, rec: rec, logs: logs}
}

// waitEngaged waits until name is engaged (recorder and Get agree) and returns the engagement.
func (s *started) waitEngaged(t *testing.T, name logicalcluster.Name) *providertest.Engagement {
	t.Helper()
	return s.rec.WaitEngaged(t, s.provider, multicluster.ClusterName(name), waitTimeout)
}

// waitDisengaged waits until the engage context of e ends and Get reports the name missing.
func (s *started) waitDisengaged(t *testing.T, name logicalcluster.Name, e *providertest.Engagement) {
	t.Helper()
	s.rec.WaitDisengaged(t, s.provider, multicluster.ClusterName(name), e, waitTimeout)
}

// waitLog waits until a log line contains every part.
func (s *started) waitLog(t *testing.T, parts ...string) string {
	t.Helper()
	var line string
	eventually(t, "log line with "+strings.Join(parts, " and "), func() error {
		var err error
		line, err = s.logs.Find(parts...)
		return err
	})
	return line
}

// logBuffer collects log lines for assertions.
type logBuffer = providertest.LogBuffer
