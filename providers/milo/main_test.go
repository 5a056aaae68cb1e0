// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/milo"
	infrastructurev1alpha1 "mcr.dev/providers/milo/api/infrastructure/v1alpha1"
	resourcemanagerv1alpha1 "mcr.dev/providers/milo/api/resourcemanager/v1alpha1"
	"mcr.dev/providers/milo/internal/frontproxy"
)

// The test binary shares one fleet: "milo" plays the Milo apiserver (Projects) and the
// infrastructure cluster (ProjectControlPlanes), with the CRDs of config/crd installed; alpha,
// beta and gamma are the projects' control planes. A front proxy before them serves the Milo
// URL space: project control-plane paths from the members, everything else from "milo".
//
// The provider always runs as a ServiceAccount of "milo" with exactly the permissions of
// config/rbac.yaml, and talks to "milo" through the proxy with its token, as it would talk to a
// Milo apiserver.
var (
	fleet    *envtest.Fleet
	proxy    *frontproxy.Proxy
	host     client.Client // admin client of "milo", directly
	provider *rest.Config  // the provider's config: the proxy, with the ServiceAccount's token
	scheme   *runtime.Scheme
)

func TestMain(m *testing.M) {
	var err error
	if scheme, err = milo.Scheme(); err == nil {
		err = apiextensionsv1.AddToScheme(scheme)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	providertest.Main(m, providertest.MainOptions{Members: []string{"milo", "alpha", "beta", "gamma"}, ListWithoutStreaming: true}, func(f *envtest.Fleet) error {
		fleet = f
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := setUp(ctx); err != nil {
			return fmt.Errorf("setting up the Milo stand-in: %w", err)
		}
		return nil
	})
}

// setUp installs the CRDs on "milo", starts the front proxy and mints the provider's token.
func setUp(ctx context.Context) error {
	hostCfg := fleet.Member("milo").Config()
	var err error
	if host, err = client.New(hostCfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	if err := installCRDs(ctx, host); err != nil {
		return err
	}
	if proxy, err = frontproxy.Start(frontproxy.Options{Host: hostCfg}); err != nil {
		return err
	}
	rules, err := providertest.ManifestRules(filepath.Join("config", "rbac.yaml"), "ClusterRole")
	if err != nil {
		return err
	}
	kubeconfig, err := fleet.Member("milo").ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{
		Name:         "milo-provider",
		ClusterRules: rules,
	})
	if err != nil {
		return err
	}
	saCfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return err
	}
	provider = proxy.Config(saCfg.BearerToken)
	return nil
}

// installCRDs installs both CRDs of config/crd with c and waits until they are served.
func installCRDs(ctx context.Context, c client.Client) error {
	var crds []client.Object
	for _, file := range []string{
		"resourcemanager.miloapis.com_projects.yaml",
		"infrastructure.miloapis.com_projectcontrolplanes.yaml",
	} {
		path := filepath.Join("config", "crd", file)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		crds = append(crds, crd)
	}
	return envtest.InstallCRDs(ctx, c, crds...)
}

// waitTimeout bounds every wait for the provider to catch up with a change.
const waitTimeout = time.Minute

// testLabel is the label by which each test selects its own objects, so that the providers of
// different tests never engage each other's projects.
const testLabel = "test.mcr.dev/name"

var nameSeq atomic.Int64

// uniqueName returns a fresh project name from a hint.
func uniqueName(hint string) string {
	return fmt.Sprintf("%s-%d", hint, nameSeq.Add(1))
}

// testID returns the value of testLabel for the running test.
func testID(t *testing.T) string {
	t.Helper()
	id := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(id) > 50 {
		id = strings.TrimRight(id[:50], "-")
	}
	return id
}

// started is a running provider.
type started struct {
	provider *milo.Provider
	rec      *providertest.Recorder
	logs     *logBuffer
}

// start runs a provider as the test's ServiceAccount through the proxy until the test ends,
// selecting the test's own objects unless opts has a Selector.
func start(t *testing.T, opts milo.Options) *started {
	t.Helper()
	logs := &logBuffer{}
	if opts.Selector == nil {
		sel, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: map[string]string{testLabel: testID(t)}})
		if err != nil {
			t.Fatal(err)
		}
		opts.Selector = sel
	}
	if opts.CacheSyncTimeout == 0 {
		opts.CacheSyncTimeout = 20 * time.Second
	}
	if opts.RetryMinDelay == 0 {
		opts.RetryMinDelay = 100 * time.Millisecond
		opts.RetryMaxDelay = time.Second
	}
	opts.Logger = logs.Logger()
	p, err := milo.New(provider, opts)
	if err != nil {
		t.Fatalf("milo.New: %v", err)
	}
	run := providertest.Start(t, p, waitTimeout)
	return &started{provider: p, rec: run.Recorder, logs: logs}
}

func (s *started) waitEngaged(t *testing.T, project string) *providertest.Engagement {
	t.Helper()
	return s.rec.WaitEngaged(t, s.provider, milo.ClusterName(project), waitTimeout)
}

func (s *started) waitDisengaged(t *testing.T, project string, e *providertest.Engagement) {
	t.Helper()
	s.rec.WaitDisengaged(t, s.provider, milo.ClusterName(project), e, waitTimeout)
}

// waitLog waits until the provider logged a line about project that contains every part.
func (s *started) waitLog(t *testing.T, project string, parts ...string) string {
	t.Helper()
	var line string
	providertest.Eventually(t, waitTimeout, fmt.Sprintf("log line about %q with %q", project, parts), func() error {
		var err error
		line, err = s.logs.Find(append([]string{`"cluster"="` + project + `"`}, parts...)...)
		return err
	})
	return line
}

// newProject creates a Project of the running test (Ready Unknown, the CRD's default).
func newProject(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	if err := createProject(t.Context(), name, withTestLabel(t, labels)); err != nil {
		t.Fatal(err)
	}
}

func withTestLabel(t *testing.T, labels map[string]string) map[string]string {
	out := map[string]string{testLabel: testID(t)}
	for k, v := range labels {
		out[k] = v
	}
	return out
}

func createProject(ctx context.Context, name string, labels map[string]string) error {
	p := &resourcemanagerv1alpha1.Project{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: resourcemanagerv1alpha1.ProjectSpec{OwnerRef: resourcemanagerv1alpha1.OwnerReference{
			Kind: "Organization", Name: "acme",
		}},
	}
	if err := host.Create(ctx, p); err != nil {
		return fmt.Errorf("creating Project %s: %w", name, err)
	}
	return nil
}

// newControlPlane creates a ProjectControlPlane of the running test (ControlPlaneReady False,
// the CRD's default).
func newControlPlane(t *testing.T, name string) {
	t.Helper()
	if err := createControlPlane(t.Context(), name, withTestLabel(t, nil)); err != nil {
		t.Fatal(err)
	}
}

func createControlPlane(ctx context.Context, name string, labels map[string]string) error {
	pcp := &infrastructurev1alpha1.ProjectControlPlane{ObjectMeta: metav1.ObjectMeta{
		Name:   name,
		Labels: labels,
	}}
	if err := host.Create(ctx, pcp); err != nil {
		return fmt.Errorf("creating ProjectControlPlane %s: %w", name, err)
	}
	return nil
}

// setReady sets the readiness condition of the object of mode named name through the status
// subresource, as Milo's controllers do.
func setReady(ctx context.Context, mode milo.Mode, name string, ready bool) error {
	status, reason := metav1.ConditionFalse, "Provisioning"
	if ready {
		status, reason = metav1.ConditionTrue, "Ready"
	}
	key := client.ObjectKey{Name: name}
	if mode == milo.ModeProjectControlPlane {
		if !ready {
			reason = infrastructurev1alpha1.ReasonCreating
		}
		pcp := &infrastructurev1alpha1.ProjectControlPlane{}
		if err := host.Get(ctx, key, pcp); err != nil {
			return err
		}
		meta.SetStatusCondition(&pcp.Status.Conditions, metav1.Condition{
			Type: infrastructurev1alpha1.ProjectControlPlaneReady, Status: status, Reason: reason, Message: "set by the test",
		})
		return host.Status().Update(ctx, pcp)
	}
	p := &resourcemanagerv1alpha1.Project{}
	if err := host.Get(ctx, key, p); err != nil {
		return err
	}
	meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{
		Type: resourcemanagerv1alpha1.ProjectReady, Status: status, Reason: reason, Message: "set by the test",
	})
	return host.Status().Update(ctx, p)
}

// setReadyT is setReady for tests, retrying conflicts.
func setReadyT(t *testing.T, mode milo.Mode, name string, ready bool) {
	t.Helper()
	providertest.Eventually(t, waitTimeout, fmt.Sprintf("setting %s ready=%t", name, ready), func() error {
		return setReady(t.Context(), mode, name, ready)
	})
}

// route serves the control plane of project from a fleet member until the test ends.
func route(t *testing.T, project, member string) {
	t.Helper()
	if err := proxy.Route(project, fleet.Member(member).Config()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Unroute(project) })
}

// routeNowhere serves the control plane of project from an address where nothing answers, until
// the test ends: Milo serves the project's path, but its control plane is down (502).
func routeNowhere(t *testing.T, project string) {
	t.Helper()
	if err := proxy.Route(project, &rest.Config{Host: "https://127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Unroute(project) })
}

// waitEvent waits for an Event of reason on the object of kind named name whose note contains
// every part, and returns its note.
func waitEvent(t *testing.T, kind, name, reason string, parts ...string) string {
	t.Helper()
	return providertest.WaitEvent(t, host, metav1.NamespaceDefault, providertest.EventTarget{Kind: kind, Name: name}, reason, waitTimeout, parts...)
}

// logBuffer collects log lines for assertions.
type logBuffer = providertest.LogBuffer

// clusterName is a shorthand for tests.
func clusterName(project string) multicluster.ClusterName { return milo.ClusterName(project) }
