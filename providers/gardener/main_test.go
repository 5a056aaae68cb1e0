// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/gardener"
	"mcr.dev/providers/gardener/internal/frontproxy"
)

// The test binary shares one fleet: "host" plays the garden cluster (Shoot CRD, reached through
// the front-proxy) and the seed cluster (the extensions Cluster CRD); east, west and north are
// the shoots' clusters. The conformance suite uses all three, the package's own tests too.
//
// The garden topology also runs on a real Gardener API, in package realgarden (gardener-apiserver,
// Shoots through its admission, credentials from its adminkubeconfig subresource): the engage,
// rotate and disengage tests and the conformance suite. The front-proxy stand-in stays here for
// what one real garden cannot show: credentials that expire within seconds (Gardener issues
// nothing shorter than 10 minutes) and their revocation at expiry, a count of the adminkubeconfig
// requests, kubeconfigs the tests choose themselves (unresponsive members, planted credentials,
// refused kubeconfigs), and the garden and seed topologies side by side on one fleet for the
// RBAC, leak and restart tests.
var (
	fleet  *envtest.Fleet
	host   client.Client
	scheme = runtime.NewScheme()
	// gardenIdentity is the provider's garden identity: a ServiceAccount token with exactly
	// the permissions of config/rbac-garden.yaml on host.
	gardenIdentity *rest.Config
	// minter issues admin kubeconfigs for east, west and north.
	minter *frontproxy.ServiceAccountMinter
)

// shootMembers back the shoots of the tests.
var shootMembers = []string{"east", "west", "north"}

func TestMain(m *testing.M) {
	providertest.Main(m, providertest.MainOptions{Members: append([]string{"host"}, shootMembers...), ListWithoutStreaming: true}, setUp)
}

// setUp prepares the fleet f: the Gardener CRDs on host, the garden identity and the minter.
func setUp(f *envtest.Fleet) error {
	sb := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, gardencorev1beta1.AddToScheme, extensionsv1alpha1.AddToScheme)
	if err := sb.AddToScheme(scheme); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	fleet = f
	hostCfg := fleet.Member("host").Config()
	if err := installCRDs(ctx, hostCfg); err != nil {
		return fmt.Errorf("installing the Gardener CRDs: %w", err)
	}
	var err error
	if host, err = client.New(hostCfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	rules, err := providertest.ManifestRules("config/rbac-garden.yaml", "ClusterRole")
	if err != nil {
		return err
	}
	data, err := fleet.Member("host").ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{
		Name: "gardener-provider", ClusterRules: rules, TokenExpiration: 2 * time.Hour,
	})
	if err != nil {
		return err
	}
	if gardenIdentity, err = clientcmd.RESTConfigFromKubeConfig(data); err != nil {
		return err
	}
	backends := map[string]*rest.Config{}
	for _, name := range shootMembers {
		backends[fleet.Member(name).Host()] = fleet.Member(name).Config()
	}
	// An address nobody listens on, for unreachable shoots: its tokens are minted on east.
	backends[unreachableURL] = fleet.Member("east").Config()
	// The minter's timers die with the process, which envtest.Main ends.
	minter, err = frontproxy.NewServiceAccountMinter(backends)
	return err
}

// unreachableURL is advertised by shoots whose API server cannot be reached.
const unreachableURL = "https://127.0.0.1:9"

// installCRDs installs the Shoot CRD the tests define and the extensions Cluster CRD Gardener
// ships, and waits until both are served.
func installCRDs(ctx context.Context, cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	clusterCRD, err := gardenerClusterCRD(ctx)
	if err != nil {
		return err
	}
	// The restart test passes its own context, which has no deadline.
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return envtest.InstallCRDs(ctx, c, shootCRD(), clusterCRD)
}

// shootCRD serves core.gardener.cloud/v1beta1 Shoots from a plain apiserver. gardener-apiserver
// serves them natively; a schemaless CRD with a status subresource is all the provider needs
// (list, watch, status updates), and the front-proxy adds the adminkubeconfig subresource.
func shootCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "shoots.core.gardener.cloud"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gardencorev1beta1.GroupName,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "shoots", Singular: "shoot", Kind: "Shoot", ListKind: "ShootList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1beta1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

// gardenerClusterCRD reads the clusters.extensions.gardener.cloud CRD Gardener ships in its
// module (the version the provider is built with), from the module cache.
func gardenerClusterCRD(ctx context.Context) (*apiextensionsv1.CustomResourceDefinition, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/gardener/gardener").Output()
	if err != nil {
		return nil, fmt.Errorf("locating the gardener module: %w", err)
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "example", "seed-crds", "10-crd-extensions.gardener.cloud_clusters.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return crd, nil
}

// waitTimeout bounds every wait for the provider to catch up with a change.
const waitTimeout = time.Minute

// eventually polls cond until it returns nil, failing the test after waitTimeout.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	providertest.Eventually(t, waitTimeout, what, cond)
}

var nsCounter atomic.Int64

// newNamespace creates a namespace of its own on host for the test, named prefix-<n>.
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, nsCounter.Add(1))
	if err := host.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// startProxy starts a front-proxy before host for the test, issuing kubeconfigs through the
// shared minter, capped to maxExpiration (0: no cap).
func startProxy(t *testing.T, maxExpiration time.Duration) *frontproxy.Server {
	t.Helper()
	proxy, err := frontproxy.Start(frontproxy.Options{
		Garden: fleet.Member("host").Config(), Mint: minter.Mint, MaxExpiration: maxExpiration,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	return proxy
}

// running is a provider the test started.
type running struct {
	*providertest.Session
	provider *gardener.Provider
	rec      *providertest.Recorder
	logs     *logBuffer
}

// startGarden runs a garden provider through proxy, as gardenIdentity, restricted to ns.
func startGarden(t *testing.T, proxy *frontproxy.Server, ns string, opts gardener.Options) *running {
	t.Helper()
	opts.Topology = gardener.TopologyGarden
	if len(opts.Namespaces) == 0 {
		opts.Namespaces = []string{ns}
	}
	return startProvider(t, proxy.ConfigFor(gardenIdentity), opts)
}

// startSeed runs a seed provider on host with admin rights.
func startSeed(t *testing.T, opts gardener.Options) *running {
	t.Helper()
	opts.Topology = gardener.TopologySeed
	return startProvider(t, fleet.Member("host").Config(), opts)
}

func startProvider(t *testing.T, cfg *rest.Config, opts gardener.Options) *running {
	t.Helper()
	logs := &logBuffer{}
	opts.Options = providertest.TestKitOptions(opts.Options, logs)
	p, err := gardener.New(cfg, opts)
	if err != nil {
		t.Fatalf("gardener.New: %v", err)
	}
	s := providertest.StartSession(t, p, logs, waitTimeout)
	return &running{Session: s, provider: p, rec: s.Recorder, logs: logs}
}

// requireReaches fails unless the engaged cluster of name talks to member.
func (r *running) requireReaches(t *testing.T, name multicluster.ClusterName, member string) {
	t.Helper()
	r.RequireReaches(t, name, fleet.Member(member).Host())
}

// usableStatus is the status of a Shoot that Gardener has created and reports healthy, with its
// API server advertised at url ("" for none).
func usableStatus(namespace, name, url string) gardencorev1beta1.ShootStatus {
	st := gardencorev1beta1.ShootStatus{
		TechnicalID: "shoot--" + strings.TrimPrefix(namespace, "garden-") + "--" + name,
		LastOperation: &gardencorev1beta1.LastOperation{
			Type: gardencorev1beta1.LastOperationTypeCreate, State: gardencorev1beta1.LastOperationStateSucceeded,
			Progress: 100, LastUpdateTime: metav1.Now(), Description: "Shoot cluster has been successfully created.",
		},
		Conditions: []gardencorev1beta1.Condition{{
			Type: gardencorev1beta1.ShootAPIServerAvailable, Status: gardencorev1beta1.ConditionTrue,
			LastTransitionTime: metav1.Now(), LastUpdateTime: metav1.Now(), Reason: "HealthzRequestSucceeded", Message: "API server /healthz endpoint responded with success status code.",
		}},
	}
	if url != "" {
		st.AdvertisedAddresses = []gardencorev1beta1.ShootAdvertisedAddress{{Name: "external", URL: url}}
	}
	return st
}

// newShoot creates a Shoot in namespace with the given labels, without status.
func newShoot(t *testing.T, namespace, name string, labels map[string]string) {
	t.Helper()
	if err := createShoot(t.Context(), namespace, name, labels); err != nil {
		t.Fatal(err)
	}
}

func createShoot(ctx context.Context, namespace, name string, labels map[string]string) error {
	shoot := &gardencorev1beta1.Shoot{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: gardencorev1beta1.ShootSpec{
			Region:   "local",
			Provider: gardencorev1beta1.Provider{Type: "local"},
			Kubernetes: gardencorev1beta1.Kubernetes{
				Version: "1.36.3",
			},
		},
	}
	if err := host.Create(ctx, shoot); err != nil {
		return fmt.Errorf("creating Shoot %s/%s: %w", namespace, name, err)
	}
	return nil
}

// updateShoot applies change to a Shoot and writes it back, spec and metadata (status false)
// or status (status true), retrying on conflicts.
func updateShoot(ctx context.Context, key client.ObjectKey, status bool, change func(*gardencorev1beta1.Shoot)) error {
	return wait.PollUntilContextTimeout(ctx, 25*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		shoot := &gardencorev1beta1.Shoot{}
		if err := host.Get(ctx, key, shoot); err != nil {
			return false, err
		}
		change(shoot)
		var err error
		if status {
			err = host.Status().Update(ctx, shoot)
		} else {
			err = host.Update(ctx, shoot)
		}
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
}

func mustUpdateShoot(t *testing.T, key client.ObjectKey, status bool, change func(*gardencorev1beta1.Shoot)) {
	t.Helper()
	if err := updateShoot(t.Context(), key, status, change); err != nil {
		t.Fatalf("updating Shoot %s: %v", key, err)
	}
}

// usableShoot creates a usable Shoot backed by member.
func usableShoot(t *testing.T, namespace, name, member string) client.ObjectKey {
	t.Helper()
	newShoot(t, namespace, name, nil)
	key := client.ObjectKey{Namespace: namespace, Name: name}
	mustUpdateShoot(t, key, true, func(s *gardencorev1beta1.Shoot) {
		s.Status = usableStatus(namespace, name, fleet.Member(member).Host())
	})
	return key
}

// setCondition sets the APIServerAvailable condition of a Shoot.
func setAPIServerAvailable(ctx context.Context, key client.ObjectKey, status gardencorev1beta1.ConditionStatus) error {
	return updateShoot(ctx, key, true, func(s *gardencorev1beta1.Shoot) {
		for i := range s.Status.Conditions {
			if s.Status.Conditions[i].Type == gardencorev1beta1.ShootAPIServerAvailable {
				s.Status.Conditions[i].Status = status
				s.Status.Conditions[i].LastTransitionTime = metav1.Now()
			}
		}
	})
}

// seedCluster creates the extensions Cluster object of shoot project/name on host, embedding
// shoot (namespace garden-<project>), and returns its name.
func seedCluster(ctx context.Context, project string, shoot *gardencorev1beta1.Shoot) (string, error) {
	name := "shoot--" + project + "--" + shoot.Name
	raw, err := json.Marshal(shoot)
	if err != nil {
		return "", err
	}
	obj := &extensionsv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: extensionsv1alpha1.ClusterSpec{
			CloudProfile: runtime.RawExtension{Raw: []byte(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"CloudProfile","metadata":{"name":"local"}}`)},
			Seed:         runtime.RawExtension{Raw: []byte(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Seed","metadata":{"name":"local"}}`)},
			Shoot:        runtime.RawExtension{Raw: raw},
		},
	}
	if err := host.Create(ctx, obj); err != nil {
		return "", fmt.Errorf("creating Cluster %s: %w", name, err)
	}
	return name, nil
}

// embeddedShoot returns a Shoot as gardenlet embeds it in a Cluster object.
func embeddedShoot(project, name string, labels map[string]string) *gardencorev1beta1.Shoot {
	ns := "garden-" + project
	return &gardencorev1beta1.Shoot{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Shoot"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, UID: types.UID("uid-" + name)},
		Spec:       gardencorev1beta1.ShootSpec{Region: "local", Provider: gardencorev1beta1.Provider{Type: "local"}},
		Status:     usableStatus(ns, name, ""),
	}
}

// updateSeedShoot changes the Shoot embedded in a Cluster object, as gardenlet does.
func updateSeedShoot(ctx context.Context, name string, change func(*gardencorev1beta1.Shoot)) error {
	return wait.PollUntilContextTimeout(ctx, 25*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		obj := &extensionsv1alpha1.Cluster{}
		if err := host.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
			return false, err
		}
		shoot, err := gardener.ShootOfCluster(obj)
		if err != nil {
			return false, err
		}
		change(shoot)
		if obj.Spec.Shoot.Raw, err = json.Marshal(shoot); err != nil {
			return false, err
		}
		err = host.Update(ctx, obj)
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// writeSeedSecret creates or updates the "gardener" Secret in namespace (created if missing)
// with kubeconfig, and the given annotations.
func writeSeedSecret(ctx context.Context, namespace string, kubeconfig []byte, annotations map[string]string) error {
	if err := host.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: gardener.SeedSecretName, Annotations: annotations,
			Labels: map[string]string{"resources.gardener.cloud/purpose": "token-requestor", "resources.gardener.cloud/class": "shoot"},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{gardener.SeedKubeconfigKey: kubeconfig, "token": []byte("not-for-the-cache")},
	}
	err := host.Create(ctx, s)
	if apierrors.IsAlreadyExists(err) {
		err = host.Update(ctx, s)
	}
	return err
}

// memberToken returns a kubeconfig for member with a ServiceAccount token of its own (a new
// token on every call), the way gardener-resource-manager writes one into the Secret
// "gardener".
func memberToken(t *testing.T, member, account string) []byte {
	t.Helper()
	data, err := fleet.Member(member).ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{
		Namespace: "kube-system", Name: account,
		ClusterRules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// eventNotes returns the notes of the Events of reason recorded on the object of kind, name and
// namespace ("" for cluster-scoped objects, whose Events land in "default").
func eventNotes(ctx context.Context, kind, namespace, name, reason string) ([]string, error) {
	return providertest.EventNotes(ctx, host, eventNamespace(namespace), providertest.EventTarget{Kind: kind, Name: name}, reason)
}

// waitEvent waits for an Event of reason on the object whose note contains every part.
func waitEvent(t *testing.T, kind, namespace, name, reason string, parts ...string) string {
	t.Helper()
	return providertest.WaitEvent(t, host, eventNamespace(namespace), providertest.EventTarget{Kind: kind, Name: name}, reason, waitTimeout, parts...)
}

// eventNamespace is where the Events of an object of namespace land: "default" for a
// cluster-scoped one.
func eventNamespace(namespace string) string {
	if namespace == "" {
		return metav1.NamespaceDefault
	}
	return namespace
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// logBuffer collects log lines for assertions.
type logBuffer = providertest.LogBuffer

// multiclusterName converts a string to a cluster name.
func multiclusterName(s string) multicluster.ClusterName { return multicluster.ClusterName(s) }
