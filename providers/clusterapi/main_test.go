// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // v1beta1 is supported on purpose (Options.APIVersion).
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterapi"
)

// The test binary shares one fleet: "mgmt" is the Cluster API management cluster with the real
// Cluster CRD installed, east, west and north are workload clusters. The conformance suite uses
// all three workload clusters, the package's own tests east and west.
var (
	fleet  *envtest.Fleet
	mgmt   client.Client
	scheme = runtime.NewScheme()
)

var (
	// webhook is the conversion webhook of the Cluster CRD, with its CA; it serves every fleet
	// of the test binary (a test with a fleet of its own installs the CRD there too) and ends
	// with the process.
	webhook   *httptest.Server
	webhookCA []byte
)

func TestMain(m *testing.M) {
	providertest.Main(m, providertest.MainOptions{Members: []string{"mgmt", "east", "west", "north"}}, setup)
}

// setup keeps the fleet, installs the Cluster CRD on mgmt and builds the client of mgmt.
func setup(f *envtest.Fleet) error {
	sb := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, clusterv1.AddToScheme, clusterv1beta1.AddToScheme)
	if err := sb.AddToScheme(scheme); err != nil {
		return err
	}
	fleet = f
	webhook, webhookCA = startConversionWebhook(scheme)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	hostCfg := fleet.Member("mgmt").Config()
	if err := installCRD(ctx, hostCfg); err != nil {
		return err
	}
	var err error
	mgmt, err = client.New(hostCfg, client.Options{Scheme: scheme})
	return err
}

// installCRD installs the Cluster API CRDs, served through the package's conversion webhook, on
// the API server cfg points to.
func installCRD(ctx context.Context, cfg *rest.Config) error {
	if err := installClusterCRD(ctx, cfg, webhook.URL+"/convert", webhookCA); err != nil {
		return fmt.Errorf("installing the Cluster API CRDs: %w", err)
	}
	return nil
}

// waitTimeout bounds every wait for the provider to catch up with a change.
const waitTimeout = time.Minute

// eventually polls cond until it returns nil, failing the test with its last error after
// waitTimeout.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	providertest.Eventually(t, waitTimeout, what, cond)
}

// namespace creates a namespace of its own on the management cluster for the test.
func namespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%s", nsCounter.Add(1), strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())))
	if len(name) > 50 {
		name = strings.TrimRight(name[:50], "-")
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := mgmt.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return name
}

var nsCounter atomic.Int64

// engagement is one Engage call seen by the recorder.
type engagement = providertest.Engagement

// started is a running provider.
type started struct {
	*providertest.Session
	provider *clusterapi.Provider
	rec      *providertest.Recorder
	logs     *logBuffer
}

// start runs a provider on the management cluster, restricted to ns, until the test ends.
func start(t *testing.T, ns string, opts clusterapi.Options) *started {
	t.Helper()
	logs := &logBuffer{}
	if len(opts.Namespaces) == 0 {
		opts.Namespaces = []string{ns}
	}
	opts.Options = providertest.TestKitOptions(opts.Options, logs)
	p, err := clusterapi.New(fleet.Member("mgmt").Config(), opts)
	if err != nil {
		t.Fatalf("clusterapi.New: %v", err)
	}
	return runProvider(t, p, logs)
}

// runProvider starts p, which logs to logs, until the test ends.
func runProvider(t *testing.T, p *clusterapi.Provider, logs *logBuffer) *started {
	t.Helper()
	s := providertest.StartSession(t, p, logs, waitTimeout)
	return &started{Session: s, provider: p, rec: s.Recorder, logs: logs}
}

// waitDecided waits until the provider has logged that it does not engage name for why (the
// end of a sync), so that a test can then check that nothing was engaged.
func (s *started) waitDecided(t *testing.T, name multicluster.ClusterName, why string) {
	t.Helper()
	eventually(t, fmt.Sprintf("provider decides about %q: %s", name, why), func() error {
		_, err := s.logs.Find(`"cluster"="`+string(name)+`"`, "Cluster not engaged: "+why)
		return err
	})
}

// requireReaches fails unless the engaged cluster of name talks to member.
func (s *started) requireReaches(t *testing.T, name multicluster.ClusterName, member string) {
	t.Helper()
	s.RequireReaches(t, name, fleet.Member(member).Host())
}

// capiCluster is a Cluster API Cluster of the management cluster in the tests.
type capiCluster struct {
	ns, name string
}

func (c capiCluster) clusterName() multicluster.ClusterName {
	return clusterapi.ClusterName(c.ns, c.name)
}

func (c capiCluster) key() client.ObjectKey { return client.ObjectKey{Namespace: c.ns, Name: c.name} }

// newCluster creates a v1beta2 Cluster, not yet initialized, with the given infrastructure kind
// and labels.
func newCluster(t *testing.T, ns, name, infraKind string, labels map[string]string) capiCluster {
	t.Helper()
	obj := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: clusterv1.ClusterSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: "infrastructure.cluster.x-k8s.io", Kind: infraKind, Name: name,
			},
		},
	}
	if err := mgmt.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating Cluster %s/%s: %v", ns, name, err)
	}
	return capiCluster{ns: ns, name: name}
}

// setInitialized sets status.initialization.controlPlaneInitialized through the status
// subresource, as the Cluster API core controller does.
func setInitialized(t *testing.T, c capiCluster, initialized bool) {
	t.Helper()
	eventually(t, "updating the status of "+c.name, func() error {
		obj := &clusterv1.Cluster{}
		if err := mgmt.Get(t.Context(), c.key(), obj); err != nil {
			return err
		}
		obj.Status.Initialization.ControlPlaneInitialized = ptr.To(initialized)
		return mgmt.Status().Update(t.Context(), obj)
	})
}

// writeKubeconfig creates or updates the kubeconfig Secret of c the way a control plane
// provider does.
func writeKubeconfig(t *testing.T, c capiCluster, kubeconfig []byte) {
	t.Helper()
	if err := writeKubeconfigSecret(t.Context(), c.ns, c.name, kubeconfig); err != nil {
		t.Fatal(err)
	}
}

func writeKubeconfigSecret(ctx context.Context, ns, name string, kubeconfig []byte) error {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns,
			Name:      clusterapi.KubeconfigSecretName(name),
			Labels:    map[string]string{clusterapi.ClusterNameLabel: name},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{clusterapi.KubeconfigDataKey: kubeconfig},
	}
	err := mgmt.Create(ctx, s)
	if apierrors.IsAlreadyExists(err) {
		err = mgmt.Update(ctx, s)
	}
	if err != nil {
		return fmt.Errorf("writing kubeconfig Secret of %s/%s: %w", ns, name, err)
	}
	return nil
}

// readyCluster creates a ready Cluster whose kubeconfig points at member.
func readyCluster(t *testing.T, ns, name, member string) capiCluster {
	t.Helper()
	c := capiCluster{ns: ns, name: name}
	writeKubeconfig(t, c, fleet.Member(member).Kubeconfig())
	newCluster(t, ns, name, "DockerCluster", nil)
	setInitialized(t, c, true)
	return c
}

// events returns the notes of the Events of the given reason recorded on c.
func events(ctx context.Context, c capiCluster, reason string) ([]string, error) {
	return providertest.EventNotes(ctx, mgmt, c.ns, providertest.EventTarget{Kind: "Cluster", Name: c.name}, reason)
}

// waitEvent waits for an Event of reason on c whose note contains every part, and returns it.
func waitEvent(t *testing.T, c capiCluster, reason string, parts ...string) string {
	t.Helper()
	return providertest.WaitEvent(t, mgmt, c.ns, providertest.EventTarget{Kind: "Cluster", Name: c.name}, reason, waitTimeout, parts...)
}

// logBuffer collects log lines for assertions.
type logBuffer = providertest.LogBuffer
