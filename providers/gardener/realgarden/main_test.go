// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package realgarden_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/gardener"
	"mcr.dev/providers/gardener/internal/gardentest"
)

var (
	garden *gardentest.Garden
	// admin is an admin client of the garden: what gardenlet and the tests write with.
	admin  client.Client
	scheme = runtime.NewScheme()
	// identity is the provider's identity on the garden: a ServiceAccount token with exactly
	// the permissions of config/rbac-garden.yaml.
	identity *rest.Config
)

func TestMain(m *testing.M) {
	// The tests give each provider a logger of its own.
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	opts := gardentest.Options{ShootServers: 3}
	if os.Getenv("MCR_GARDEN_LOG") != "" {
		opts.Output = os.Stderr
	}
	gardentest.Main(m, opts, setUp)
}

func setUp(g *gardentest.Garden) error {
	sb := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, gardencorev1beta1.AddToScheme)
	if err := sb.AddToScheme(scheme); err != nil {
		return err
	}
	garden = g
	var err error
	if admin, err = client.New(g.Config(), client.Options{Scheme: scheme}); err != nil {
		return err
	}
	rules, err := providertest.ManifestRules("../config/rbac-garden.yaml", "ClusterRole")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	identity, err = g.ServiceAccountConfig(ctx, "gardener-provider", rules)
	return err
}

// waitTimeout bounds every wait for the provider to catch up with the garden.
const waitTimeout = 2 * time.Minute

var nsCounter atomic.Int64

// newProject creates a Gardener project of its own for the test, <prefix><n>, and returns its
// namespace, garden-<prefix><n>.
func newProject(t *testing.T, prefix string) string {
	t.Helper()
	gardentest.Skip(t)
	ns, err := garden.NewProject(t.Context(), admin, fmt.Sprintf("%s%d", prefix, nsCounter.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// createShoot creates a Shoot through gardener-apiserver and provides its control plane on
// server (client and cluster CA, trust), without status: as right after `kubectl create`, before
// gardenlet has reconciled it.
func createShoot(ctx context.Context, namespace, name string, server *gardentest.ShootServer) error {
	if err := admin.Create(ctx, gardentest.Shoot(namespace, name)); err != nil {
		return fmt.Errorf("creating Shoot %s/%s: %w", namespace, name, err)
	}
	return garden.ProvideShoot(ctx, admin, namespace, name, server)
}

// usableStatus is the status gardenlet writes for a shoot it created, healthy, with its API
// server advertised at url.
func usableStatus(namespace, name, url string) gardencorev1beta1.ShootStatus {
	now := metav1.Now()
	return gardencorev1beta1.ShootStatus{
		TechnicalID: "shoot--" + namespace[len("garden-"):] + "--" + name,
		LastOperation: &gardencorev1beta1.LastOperation{
			Type: gardencorev1beta1.LastOperationTypeCreate, State: gardencorev1beta1.LastOperationStateSucceeded,
			Progress: 100, LastUpdateTime: now, Description: "Shoot cluster has been successfully created.",
		},
		Conditions: []gardencorev1beta1.Condition{{
			Type: gardencorev1beta1.ShootAPIServerAvailable, Status: gardencorev1beta1.ConditionTrue,
			LastTransitionTime: now, LastUpdateTime: now, Reason: "HealthzRequestSucceeded", Message: "API server /healthz endpoint responded with success status code.",
		}},
		AdvertisedAddresses: []gardencorev1beta1.ShootAdvertisedAddress{{Name: "external", URL: url}},
	}
}

// updateShoot applies change to a Shoot and writes it back, metadata and spec (status false)
// or status (status true), retrying on conflicts.
func updateShoot(ctx context.Context, key client.ObjectKey, status bool, change func(*gardencorev1beta1.Shoot)) error {
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		shoot := &gardencorev1beta1.Shoot{}
		if err := admin.Get(ctx, key, shoot); err != nil {
			return false, err
		}
		change(shoot)
		var err error
		if status {
			err = admin.Status().Update(ctx, shoot)
		} else {
			err = admin.Update(ctx, shoot)
		}
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// usableShoot creates a Shoot on server and reports it usable, as gardenlet does once the
// shoot is created.
func usableShoot(ctx context.Context, namespace, name string, server *gardentest.ShootServer) error {
	if err := createShoot(ctx, namespace, name, server); err != nil {
		return err
	}
	return updateShoot(ctx, client.ObjectKey{Namespace: namespace, Name: name}, true, func(s *gardencorev1beta1.Shoot) {
		s.Status = usableStatus(namespace, name, server.Host())
	})
}

// deleteShoot deletes a Shoot the way users must: confirmed by annotation first (Gardener's
// DeletionConfirmation admission refuses unconfirmed deletions); then its server forgets it.
func deleteShoot(ctx context.Context, namespace, name string) error {
	key := client.ObjectKey{Namespace: namespace, Name: name}
	err := updateShoot(ctx, key, false, func(s *gardencorev1beta1.Shoot) {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations["confirmation.gardener.cloud/deletion"] = "true"
	})
	if err == nil {
		err = admin.Delete(ctx, &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}})
	}
	if err := client.IgnoreNotFound(err); err != nil {
		return err
	}
	return garden.ForgetShoot(namespace, name)
}

// setAPIServerAvailable sets the APIServerAvailable condition of a Shoot.
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

// running is a garden provider a test started.
type running struct {
	provider *gardener.Provider
	rec      *providertest.Recorder
	logs     *providertest.LogBuffer
}

// startProvider runs a garden provider as identity, restricted to namespace.
func startProvider(t *testing.T, namespace string, opts gardener.Options) *running {
	t.Helper()
	logs := &providertest.LogBuffer{}
	opts.Topology = gardener.TopologyGarden
	opts.Namespaces = []string{namespace}
	opts.Logger = logs.Logger()
	opts.CacheSyncTimeout = 30 * time.Second
	opts.RetryMinDelay, opts.RetryMaxDelay = 100*time.Millisecond, 2*time.Second
	p, err := gardener.New(identity, opts)
	if err != nil {
		t.Fatalf("gardener.New: %v", err)
	}
	r := providertest.Start(t, p, waitTimeout)
	return &running{provider: p, rec: r.Recorder, logs: logs}
}

func (r *running) waitEngaged(t *testing.T, name multicluster.ClusterName) *providertest.Engagement {
	t.Helper()
	return r.rec.WaitEngaged(t, r.provider, name, waitTimeout)
}

// requireReaches fails unless the engaged cluster of name works on server, with admin rights.
func (r *running) requireReaches(t *testing.T, name multicluster.ClusterName, server *gardentest.ShootServer) {
	t.Helper()
	cl, err := r.provider.Get(t.Context(), name)
	if err != nil {
		t.Fatalf("Get(%q): %v", name, err)
	}
	if got := cl.GetConfig().Host; got != server.Host() {
		t.Errorf("cluster %q talks to %s, want %s (%s)", name, got, server.Host(), server.Name())
	}
	if err := cl.GetAPIReader().List(t.Context(), &corev1.SecretList{}, client.InNamespace("kube-system")); err != nil {
		t.Errorf("cluster %q: listing Secrets on %s with the admin credentials: %v", name, server.Name(), err)
	}
}

// waitLogged waits until a log line about name contains every part.
func (r *running) waitLogged(t *testing.T, name multicluster.ClusterName, parts ...string) {
	t.Helper()
	providertest.Eventually(t, waitTimeout, fmt.Sprintf("log about %q: %q", name, parts), func() error {
		_, err := r.logs.Find(append([]string{`"cluster"="` + string(name) + `"`}, parts...)...)
		return err
	})
}
