// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"mcr.dev/conformance"
	"mcr.dev/conformance/mcrproviders"
	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/gardener"
	"mcr.dev/providers/gardener/internal/frontproxy"
)

// startForwarder puts a forwarder before the HTTPS server at url (https://host:port) until the
// suite ends: the provider reaches its source of truth through it, and StopSource takes it down
// and up again, which to the provider is a restart of that apiserver while the server itself
// keeps serving everyone else.
func startForwarder(url string) *envtest.Forwarder {
	link, err := envtest.StartForwarder(strings.TrimPrefix(url, "https://"))
	if err != nil {
		ginkgo.Fail(err.Error())
	}
	ginkgo.DeferCleanup(link.Close)
	return link
}

// behind returns a copy of cfg that reaches its server through link.
func behind(cfg *rest.Config, link *envtest.Forwarder) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Host = link.URL()
	return cfg
}

// conformanceReports is where each topology's YAML report is written; TestConformance logs
// their summaries.
var conformanceReports = map[gardener.Topology]string{}

var (
	_ = conformance.RegisterSpecs(func() conformance.Harness { return newGardenHarness() }, func() conformance.Options {
		return conformanceOptions(gardener.TopologyGarden)
	})
	_ = conformance.RegisterSpecs(func() conformance.Harness {
		return newSeedHarness(startForwarder(fleet.Member("host").Host()), false)
	}, func() conformance.Options {
		return conformanceOptions(gardener.TopologySeed)
	})
)

func conformanceOptions(topology gardener.Topology) conformance.Options {
	// The suite runs once per topology, in one Ginkgo suite (Ginkgo allows one per test binary):
	// every extended feature is claimed in both.
	o := mcrproviders.Options("gardener (" + string(topology) + " topology)")
	o.ReportPath = conformanceReports[topology]
	return o
}

// TestConformance runs the mcr conformance suite against both topologies: the garden one, where
// members are Shoots whose admin credentials come from the front-proxy's adminkubeconfig
// subresource, and the seed one, where members are extensions Cluster objects with their
// Secret "gardener". Members are fleet apiservers with ServiceAccount tokens of their own, which
// the suite rotates and revokes. The garden topology passes the suite on a real gardener-apiserver
// too (realgarden.TestConformance); this run adds what only the front-proxy can show:
// UnresponsiveMembers and CredentialHygiene, whose kubeconfigs the suite writes itself.
func TestConformance(t *testing.T) {
	dir := t.TempDir()
	for _, topology := range []gardener.Topology{gardener.TopologyGarden, gardener.TopologySeed} {
		path := filepath.Join(dir, string(topology)+".yaml")
		if base := os.Getenv(conformance.ReportEnv); base != "" {
			path = strings.TrimSuffix(base, filepath.Ext(base)) + "-" + string(topology) + filepath.Ext(base)
		}
		conformanceReports[topology] = path
	}
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "mcr provider conformance: gardener")
	for _, topology := range []gardener.Topology{gardener.TopologyGarden, gardener.TopologySeed} {
		data, err := os.ReadFile(conformanceReports[topology])
		if err != nil {
			t.Errorf("no conformance report of the %s topology: %v", topology, err)
			continue
		}
		var report conformance.Report
		if err := yaml.Unmarshal(data, &report); err != nil {
			t.Errorf("conformance report of the %s topology: %v", topology, err)
			continue
		}
		t.Log("\n" + report.Markdown())
	}
}

// gardenNamespace is the project namespace of the garden members' Shoots.
const gardenNamespace = "garden-conformance"

// gardenHarness makes members Shoots of one project namespace. The front-proxy issues, for a
// Shoot, the member's current credentials; a credential rotation is a certificate authority
// rotation of the Shoot, which makes the provider request new admin credentials.
type gardenHarness struct {
	fleet *conformance.Fleet
	proxy *frontproxy.Server
	// link stands between the providers and the front-proxy: the garden as they see it.
	link *envtest.Forwarder
	// logs receives the log lines of every provider instance, for Reports.
	logs providertest.LogBuffer

	mu        sync.Mutex
	rotations map[string]int
	// kubeconfigs are the kubeconfigs the suite chose for members (unresponsive ones), which
	// mint issues instead of a fleet member's.
	kubeconfigs map[string][]byte
}

var (
	_ conformance.CredentialRotator         = &gardenHarness{}
	_ conformance.ReadinessToggler          = &gardenHarness{}
	_ conformance.UnresponsiveMemberCreator = &gardenHarness{}
	_ conformance.ReportSource              = &gardenHarness{}
	_ conformance.SourceRestarter           = &gardenHarness{}
	_ conformance.Resyncer                  = &gardenHarness{}
)

func newGardenHarness() *gardenHarness {
	h := &gardenHarness{
		fleet:       conformance.NewFleet(fleet.Member("east"), fleet.Member("west"), fleet.Member("north")),
		rotations:   map[string]int{},
		kubeconfigs: map[string][]byte{},
	}
	if err := host.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gardenNamespace}}); err != nil {
		ginkgo.Fail(err.Error())
	}
	proxy, err := frontproxy.Start(frontproxy.Options{Garden: fleet.Member("host").Config(), Mint: h.mint})
	if err != nil {
		ginkgo.Fail(err.Error())
	}
	ginkgo.DeferCleanup(proxy.Close)
	h.proxy = proxy
	h.link = startForwarder(proxy.URL())
	return h
}

// mint issues the current credentials of the member behind a Shoot.
func (h *gardenHarness) mint(_ context.Context, shoot *gardencorev1beta1.Shoot, validity time.Duration) ([]byte, time.Time, error) {
	h.mu.Lock()
	kubeconfig, chosen := h.kubeconfigs[shoot.Name]
	h.mu.Unlock()
	if chosen {
		return kubeconfig, time.Now().Add(validity), nil
	}
	fm := h.fleet.Get(shoot.Name)
	if fm == nil {
		return nil, time.Time{}, fmt.Errorf("no fleet member %q", shoot.Name)
	}
	return fm.Kubeconfig(), time.Now().Add(validity), nil
}

func (h *gardenHarness) NewProvider(context.Context) (multicluster.Provider, error) {
	return gardener.New(behind(h.proxy.ConfigFor(gardenIdentity), h.link), gardener.Options{
		Namespaces: []string{gardenNamespace},
		Options:    kit.Options{RetryMaxDelay: time.Second, Logger: h.logs.Logger(), ResyncPeriod: mcrproviders.Resync},
	})
}

// StopSource takes the garden down for the providers: the forwarder before the front-proxy
// refuses connections and drops the open ones.
func (h *gardenHarness) StopSource(ctx context.Context) (func(context.Context) error, error) {
	return mcrproviders.Outage(h.link)(ctx)
}

func (h *gardenHarness) ResyncPeriod() time.Duration { return mcrproviders.Resync }

// Reports returns the providers' log lines and the Events on the Shoots, which the provider
// records through the front-proxy in the host cluster.
func (h *gardenHarness) Reports(ctx context.Context) ([]string, error) {
	return mcrproviders.Reports(h.logs.Lines, host, gardenNamespace)(ctx)
}

func (h *gardenHarness) CreateMember(ctx context.Context, name string) (conformance.Member, error) {
	fm, err := h.fleet.Add(ctx, name)
	if err != nil {
		return conformance.Member{}, err
	}
	key := client.ObjectKey{Namespace: gardenNamespace, Name: name}
	err = createShoot(ctx, gardenNamespace, name, nil)
	if err == nil {
		err = updateShoot(ctx, key, true, func(s *gardencorev1beta1.Shoot) {
			s.Status = usableStatus(gardenNamespace, name, fm.Server().Host())
		})
	}
	if err != nil {
		return conformance.Member{}, errors.Join(err, h.fleet.Remove(ctx, name))
	}
	return fm.Member(gardener.ShootClusterName(gardenNamespace, name)), nil
}

// UpdateMember labels the Shoot.
func (h *gardenHarness) UpdateMember(ctx context.Context, m conformance.Member) error {
	return updateShoot(ctx, client.ObjectKey{Namespace: gardenNamespace, Name: m.ID}, false, func(s *gardencorev1beta1.Shoot) {
		s.Labels = map[string]string{"conformance.mcr.dev/touched": time.Now().Format("150405.000000")}
	})
}

func (h *gardenHarness) DeleteMember(ctx context.Context, m conformance.Member) error {
	shoot := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: gardenNamespace, Name: m.ID}}
	if err := client.IgnoreNotFound(host.Delete(ctx, shoot)); err != nil {
		return err
	}
	h.mu.Lock()
	delete(h.kubeconfigs, m.ID)
	h.mu.Unlock()
	return h.fleet.Remove(ctx, m.ID)
}

// CreateUnresponsiveMember creates a usable Shoot whose adminkubeconfig is the given one. The
// Shoot advertises the kubeconfig's server, as Gardener's do: without an advertised address the
// front-proxy refuses the request, and the provider would never see the kubeconfig.
func (h *gardenHarness) CreateUnresponsiveMember(ctx context.Context, name string, kubeconfig []byte) (conformance.Member, error) {
	server, err := kubeconfigServer(kubeconfig)
	if err != nil {
		return conformance.Member{}, err
	}
	h.mu.Lock()
	_, exists := h.kubeconfigs[name]
	h.kubeconfigs[name] = kubeconfig
	h.mu.Unlock()
	m := conformance.Member{ID: name, Name: gardener.ShootClusterName(gardenNamespace, name)}
	if exists {
		return m, nil
	}
	key := client.ObjectKey{Namespace: gardenNamespace, Name: name}
	err = createShoot(ctx, gardenNamespace, name, nil)
	if err == nil {
		err = updateShoot(ctx, key, true, func(s *gardencorev1beta1.Shoot) {
			s.Status = usableStatus(gardenNamespace, name, server)
		})
	}
	return m, err
}

// kubeconfigServer returns the server of the current context of a kubeconfig.
func kubeconfigServer(kubeconfig []byte) (string, error) {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	current := cfg.Contexts[cfg.CurrentContext]
	if current == nil || cfg.Clusters[current.Cluster] == nil {
		return "", fmt.Errorf("the kubeconfig has no cluster for its current context %q", cfg.CurrentContext)
	}
	return cfg.Clusters[current.Cluster].Server, nil
}

// caPhases are the phases of a certificate authority rotation, in order.
var caPhases = []gardencorev1beta1.CredentialsRotationPhase{
	gardencorev1beta1.RotationPreparing, gardencorev1beta1.RotationPrepared,
	gardencorev1beta1.RotationCompleting, gardencorev1beta1.RotationCompleted,
}

// RotateCredentials gives the member new credentials and moves the Shoot's certificate
// authority rotation on by one phase, as gardenlet reports it.
func (h *gardenHarness) RotateCredentials(ctx context.Context, m conformance.Member) (func(context.Context) error, error) {
	fm := h.fleet.Get(m.ID)
	if fm == nil {
		return nil, fmt.Errorf("no fleet member %q", m.ID)
	}
	revoke, err := fm.Rotate(ctx)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	n := h.rotations[m.ID]
	h.rotations[m.ID]++
	h.mu.Unlock()
	err = updateShoot(ctx, client.ObjectKey{Namespace: gardenNamespace, Name: m.ID}, true, func(s *gardencorev1beta1.Shoot) {
		now := metav1.Now()
		s.Status.Credentials = &gardencorev1beta1.ShootCredentials{Rotation: &gardencorev1beta1.ShootCredentialsRotation{
			CertificateAuthorities: &gardencorev1beta1.CARotation{Phase: caPhases[n%len(caPhases)], LastInitiationTime: &now},
		}}
	})
	if err != nil {
		return nil, errors.Join(err, revoke(ctx))
	}
	return revoke, nil
}

// SetReady sets the Shoot's APIServerAvailable condition.
func (h *gardenHarness) SetReady(ctx context.Context, m conformance.Member, ready bool) error {
	status := gardencorev1beta1.ConditionTrue
	if !ready {
		status = gardencorev1beta1.ConditionFalse
	}
	return setAPIServerAvailable(ctx, client.ObjectKey{Namespace: gardenNamespace, Name: m.ID}, status)
}

// seedProject is the project of the seed members' Shoots.
const seedProject = "conf"

// seedHarness makes members shoot control planes of the seed: a Cluster object and the Secret
// "gardener" in the control-plane namespace; a rotation writes a new token into the Secret, as
// gardener-resource-manager does, and readiness is the Shoot's hibernation.
type seedHarness struct {
	*conformance.KubeconfigHarness
}

var _ conformance.ReadinessToggler = seedHarness{}

func seedNamespace(name string) string { return "shoot--" + seedProject + "--" + name }

// TestSeedConformanceInPlace runs the suite's rotation tests against the seed topology with
// kit.Options.RefreshCredentialsInPlace on (the default; TestConformance turns it off), claiming
// InPlaceCredentialRefresh: a token renewed in the Secret "gardener", as
// gardener-resource-manager renews it, keeps the engagement.
func TestSeedConformanceInPlace(t *testing.T) {
	link, err := envtest.StartForwarder(strings.TrimPrefix(fleet.Member("host").Host(), "https://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(link.Close)
	mcrproviders.RunInPlace(t, newSeedHarness(link, true), conformanceOptions(gardener.TopologySeed))
}

// newSeedHarness returns the harness of the seed topology, whose providers reach the seed
// through link (SourceOutage takes it down and up again); inPlace turns on the kit's in-place
// credential refresh.
func newSeedHarness(link *envtest.Forwarder, inPlace bool) seedHarness {
	logs := &providertest.LogBuffer{}
	return seedHarness{&conformance.KubeconfigHarness{
		Fleet: conformance.NewFleet(fleet.Member("east"), fleet.Member("west"), fleet.Member("north")),
		Provider: func(context.Context) (multicluster.Provider, error) {
			return gardener.New(behind(fleet.Member("host").Config(), link), gardener.Options{
				Topology:   gardener.TopologySeed,
				Namespaces: []string{"garden-" + seedProject},
				Options: kit.Options{RetryMaxDelay: time.Second, Logger: logs.Logger(), ResyncPeriod: mcrproviders.Resync,
					RefreshCredentialsInPlace: ptr.To(inPlace)},
			})
		},
		SourceOutage: mcrproviders.Outage(link),
		Resync:       mcrproviders.Resync,
		// The Secret first, then the Cluster object: gardenlet creates the namespace and its
		// Secrets before extensions see the Cluster.
		Write: func(ctx context.Context, name string, kubeconfig []byte) error {
			if err := writeSeedSecret(ctx, seedNamespace(name), kubeconfig, nil); err != nil {
				return err
			}
			obj := &extensionsv1alpha1.Cluster{}
			if err := host.Get(ctx, client.ObjectKey{Name: seedNamespace(name)}, obj); err == nil {
				return nil // a rotation: only the Secret changes
			}
			_, err := seedCluster(ctx, seedProject, embeddedShoot(seedProject, name, nil))
			return err
		},
		Delete: func(ctx context.Context, name string) error {
			obj := &extensionsv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: seedNamespace(name)}}
			if err := client.IgnoreNotFound(host.Delete(ctx, obj)); err != nil {
				return err
			}
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: seedNamespace(name), Name: gardener.SeedSecretName}}
			return client.IgnoreNotFound(host.Delete(ctx, s))
		},
		// The Events are on the Cluster objects, which have no namespace: the recorder puts them
		// in "default", so every namespace is read.
		ProviderReports: mcrproviders.Reports(logs.Lines, host, ""),
		// What gardener-resource-manager and gardenlet do without changing the credentials: the
		// renew timestamp on the Secret, a label on the Shoot.
		Update: func(ctx context.Context, name string) error {
			s := &corev1.Secret{}
			if err := host.Get(ctx, client.ObjectKey{Namespace: seedNamespace(name), Name: gardener.SeedSecretName}, s); err != nil {
				return err
			}
			s.Annotations = map[string]string{"serviceaccount.resources.gardener.cloud/token-renew-timestamp": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
			if err := host.Update(ctx, s); err != nil {
				return err
			}
			return updateSeedShoot(ctx, seedNamespace(name), func(s *gardencorev1beta1.Shoot) {
				s.Labels = map[string]string{"conformance.mcr.dev/touched": time.Now().Format("150405.000000")}
			})
		},
		ClusterName: func(name string) multicluster.ClusterName { return gardener.SeedClusterName(seedNamespace(name)) },
	}}
}

// SetReady hibernates the Shoot (unready) or wakes it up, as gardenlet writes it into the
// Cluster object.
func (h seedHarness) SetReady(ctx context.Context, m conformance.Member, ready bool) error {
	return updateSeedShoot(ctx, seedNamespace(m.ID), func(s *gardencorev1beta1.Shoot) {
		s.Spec.Hibernation = &gardencorev1beta1.Hibernation{Enabled: ptr.To(!ready)}
	})
}
