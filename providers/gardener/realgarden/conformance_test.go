// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package realgarden_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"mcr.dev/conformance"
	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/gardener"
	"mcr.dev/providers/gardener/internal/gardentest"
)

// The features the suite checks on the real garden. UnresponsiveMembers and CredentialHygiene
// need members whose kubeconfig the suite writes itself (a server that never answers, planted
// credentials), which a real adminkubeconfig subresource never returns: the front-proxy harness
// of the provider package keeps them.
var realFeatures = []conformance.Feature{
	conformance.CredentialRotation,
	conformance.MemberReadiness,
	conformance.EngageErrorRecovery,
	conformance.Scale,
	conformance.SourceRestart,
	conformance.PeriodicResync,
}

// resync is the ResyncPeriod of the providers under test: short, for NoReengageOnResync.
const resync = 2 * time.Second

// TestConformance runs the conformance suite against the garden topology on the real Gardener
// API: members are Shoots of one project, created through gardener-apiserver, engaged with
// the credentials its adminkubeconfig subresource issues; a credential rotation is a rotation
// of the Shoot's client CA.
func TestConformance(t *testing.T) {
	ns := newProject(t, "conf")
	link, err := envtest.StartForwarder(strings.TrimPrefix(garden.Host(), "https://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(link.Close)
	h := &harness{namespace: ns, link: link, servers: map[string]*gardentest.ShootServer{}, rotations: map[string]int{}}
	rep, err := conformance.Assess(t.Context(), h, conformance.Options{
		Features: realFeatures,
		Implementation: conformance.Implementation{
			Organization: "mcr",
			Project:      "mcr.dev/providers/gardener (garden topology)",
			Version:      "on gardener-apiserver " + gardentest.Version,
		},
	}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + rep.Markdown())
	claimed := map[conformance.Feature]bool{conformance.Core: true}
	for _, f := range realFeatures {
		claimed[f] = true
	}
	for _, r := range rep.Tests {
		want := conformance.Passed
		if !claimed[r.Feature] {
			want = conformance.NotSupported
		}
		if r.Result != want {
			t.Errorf("%s: %s, want %s: %s", r.ID, r.Result, want, r.Message)
		}
	}
}

// harness makes members Shoots of one project namespace, each on the least busy shoot server.
type harness struct {
	namespace string
	// link stands between the providers and the garden; StopSource takes it down.
	link *envtest.Forwarder
	logs providertest.LogBuffer

	mu        sync.Mutex
	servers   map[string]*gardentest.ShootServer // by member
	rotations map[string]int
}

var (
	_ conformance.CredentialRotator = &harness{}
	_ conformance.ReadinessToggler  = &harness{}
	_ conformance.SourceRestarter   = &harness{}
	_ conformance.Resyncer          = &harness{}
)

func (h *harness) NewProvider(context.Context) (multicluster.Provider, error) {
	cfg := *identity
	cfg.Host = h.link.URL()
	return gardener.New(&cfg, gardener.Options{
		Namespaces: []string{h.namespace},
		Options:    kit.Options{RetryMaxDelay: time.Second, Logger: h.logs.Logger(), ResyncPeriod: resync},
	})
}

// pick returns the shoot server with the fewest members.
func (h *harness) pick() *gardentest.ShootServer {
	load := map[*gardentest.ShootServer]int{}
	for _, s := range h.servers {
		load[s]++
	}
	best := garden.ShootServers()[0]
	for _, s := range garden.ShootServers() {
		if load[s] < load[best] {
			best = s
		}
	}
	return best
}

func (h *harness) CreateMember(ctx context.Context, name string) (conformance.Member, error) {
	h.mu.Lock()
	if _, exists := h.servers[name]; exists {
		h.mu.Unlock()
		return conformance.Member{}, fmt.Errorf("member %q exists", name)
	}
	server := h.pick()
	h.servers[name] = server
	h.mu.Unlock()
	if err := usableShoot(ctx, h.namespace, name, server); err != nil {
		return conformance.Member{}, err
	}
	c, err := client.New(server.Config(), client.Options{})
	if err != nil {
		return conformance.Member{}, err
	}
	return conformance.Member{ID: name, Name: gardener.ShootClusterName(h.namespace, name), Client: c}, nil
}

// UpdateMember labels the Shoot.
func (h *harness) UpdateMember(ctx context.Context, m conformance.Member) error {
	return updateShoot(ctx, client.ObjectKey{Namespace: h.namespace, Name: m.ID}, false, func(s *gardencorev1beta1.Shoot) {
		s.Labels = map[string]string{"conformance.mcr.dev/touched": time.Now().Format("150405.000000")}
	})
}

func (h *harness) DeleteMember(ctx context.Context, m conformance.Member) error {
	if err := deleteShoot(ctx, h.namespace, m.ID); err != nil {
		return err
	}
	h.mu.Lock()
	delete(h.servers, m.ID)
	h.mu.Unlock()
	return nil
}

// caPhases are the phases of a certificate authority rotation, in order.
var caPhases = []gardencorev1beta1.CredentialsRotationPhase{
	gardencorev1beta1.RotationPreparing, gardencorev1beta1.RotationPrepared,
	gardencorev1beta1.RotationCompleting, gardencorev1beta1.RotationCompleted,
}

// RotateCredentials rotates the Shoot's client CA and moves its certificate authority rotation
// on by one phase, as gardenlet reports it; revokeOld makes the shoot server drop the old CA.
func (h *harness) RotateCredentials(ctx context.Context, m conformance.Member) (func(context.Context) error, error) {
	revoke, err := garden.RotateClientCA(ctx, admin, h.namespace, m.ID)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	n := h.rotations[m.ID]
	h.rotations[m.ID]++
	h.mu.Unlock()
	err = updateShoot(ctx, client.ObjectKey{Namespace: h.namespace, Name: m.ID}, true, func(s *gardencorev1beta1.Shoot) {
		now := metav1.Now()
		s.Status.Credentials = &gardencorev1beta1.ShootCredentials{Rotation: &gardencorev1beta1.ShootCredentialsRotation{
			CertificateAuthorities: &gardencorev1beta1.CARotation{Phase: caPhases[n%len(caPhases)], LastInitiationTime: &now},
		}}
	})
	if err != nil {
		return nil, err
	}
	return revoke, nil
}

// SetReady sets the Shoot's APIServerAvailable condition.
func (h *harness) SetReady(ctx context.Context, m conformance.Member, ready bool) error {
	status := gardencorev1beta1.ConditionTrue
	if !ready {
		status = gardencorev1beta1.ConditionFalse
	}
	return setAPIServerAvailable(ctx, client.ObjectKey{Namespace: h.namespace, Name: m.ID}, status)
}

// StopSource takes the garden down for the providers: the forwarder before it refuses
// connections and drops the open ones.
func (h *harness) StopSource(context.Context) (func(context.Context) error, error) {
	h.link.Down()
	return func(context.Context) error { return h.link.Up() }, nil
}

func (h *harness) ResyncPeriod() time.Duration { return resync }
