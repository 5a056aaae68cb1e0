package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/examples/internal/exampletest"
)

var fleet *envtest.Fleet

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m, &fleet, "hub", "east", "west")) }

// The whole pattern against real apiservers: spec down to every member, status up to the host,
// drift in a member repaired, a member leaving the fleet dropped from the status, and the copies
// deleted through the finalizer when the source is deleted.
func TestMulticlusterAware(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "members")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	exampletest.WriteKubeconfig(t, dir, "east.kubeconfig", fleet.Member("east"))
	westFile := exampletest.WriteKubeconfig(t, dir, "west.kubeconfig", fleet.Member("west"))
	members := map[string]client.Client{
		"east.kubeconfig+east": exampletest.Client(t, fleet.Member("east").Config()),
		"west.kubeconfig+west": exampletest.Client(t, fleet.Member("west").Config()),
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	host, err := client.New(fleet.Member("hub").Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	kubeconfig := exampletest.WriteKubeconfig(t, t.TempDir(), "hub.kubeconfig", fleet.Member("hub"))
	p := exampletest.Start(t, func(ctx context.Context) error {
		return run(ctx, []string{
			"-kubeconfig", kubeconfig, "-fleet", dir + "/",
			"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-zap-log-level", "error",
		})
	})
	// The example installs its CRD; create the source once it is served.
	if err := host.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}); err != nil {
		t.Fatal(err)
	}
	src := &FleetConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "settings"},
		Spec:       FleetConfigMapSpec{Data: map[string]string{"log-level": "info"}},
	}
	p.Eventually(t, "FleetConfigMap created", func(ctx context.Context) error { return host.Create(ctx, src) })
	key := client.ObjectKeyFromObject(src)

	// Spec down, status up.
	p.Eventually(t, "copies in every member", copiesHave(members, key, map[string]string{"log-level": "info"}))
	p.Eventually(t, "status of both members", statusIs(host, key, "2/2", "east.kubeconfig+east", "west.kubeconfig+west"))
	if err := host.Get(t.Context(), key, src); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(src.Finalizers, finalizer) {
		t.Errorf("finalizers = %v, want %s", src.Finalizers, finalizer)
	}

	// A spec change reaches every member.
	src.Spec.Data = map[string]string{"log-level": "debug"}
	if err := host.Update(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	p.Eventually(t, "updated copies", copiesHave(members, key, map[string]string{"log-level": "debug"}))

	// A copy deleted in a member is put back.
	west := members["west.kubeconfig+west"]
	if err := west.Delete(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "settings"}}); err != nil {
		t.Fatal(err)
	}
	p.Eventually(t, "west's copy restored", copiesHave(members, key, map[string]string{"log-level": "debug"}))

	// West leaves the fleet: it drops out of the status (its copy stays: it is out of reach).
	if err := os.Remove(westFile); err != nil {
		t.Fatal(err)
	}
	p.Eventually(t, "status without west", statusIs(host, key, "1/1", "east.kubeconfig+east"))

	// Deleting the source deletes the copies of the members, then the source.
	if err := host.Delete(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	p.Eventually(t, "source gone", func(ctx context.Context) error {
		err := host.Get(ctx, key, &FleetConfigMap{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("FleetConfigMap still there (%v)", err)
	})
	if err := members["east.kubeconfig+east"].Get(t.Context(), key, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("east's copy after the source was deleted: %v, want not found", err)
	}
	p.Stop(t)
}

func copiesHave(members map[string]client.Client, key client.ObjectKey, data map[string]string) func(context.Context) error {
	return func(ctx context.Context) error {
		for name, c := range members {
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, key, cm); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if !maps.Equal(cm.Data, data) {
				return fmt.Errorf("%s: data %v, want %v", name, cm.Data, data)
			}
		}
		return nil
	}
}

func statusIs(host client.Client, key client.ObjectKey, synced string, clusters ...string) func(context.Context) error {
	return func(ctx context.Context) error {
		f := &FleetConfigMap{}
		if err := host.Get(ctx, key, f); err != nil {
			return err
		}
		var names []string
		for _, c := range f.Status.Clusters {
			if !c.Synced {
				return fmt.Errorf("cluster %s not synced: %s", c.Name, c.Message)
			}
			names = append(names, c.Name)
		}
		if f.Status.Synced != synced || !slices.Equal(names, clusters) {
			return fmt.Errorf("status: synced %q clusters %v, want %q %v", f.Status.Synced, names, synced, clusters)
		}
		if f.Status.ObservedGeneration != f.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", f.Status.ObservedGeneration, f.Generation)
		}
		return nil
	}
}
