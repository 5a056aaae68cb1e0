// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kcp-dev/logicalcluster/v3"

	mcr "mcr.dev/core"
	"mcr.dev/core/envtest"
	"mcr.dev/core/ownership"
	"mcr.dev/examples/internal/exampletest"
	"mcr.dev/providers/kcp/kcptest"
)

// fleet holds the downstream cluster, a real kube-apiserver.
var fleet *envtest.Fleet

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m, &fleet, "downstream")) }

// The whole Platform Mesh flow on a real kcp: a service provider's workspace publishes the
// Database API (config/crd.yaml as an APIResourceSchema, config/apiexport.yaml), consumer
// workspaces bind it and order Databases, and the example runs each one in the downstream
// cluster and reports back. Checked: every Database gets its projection downstream, in its
// consumer's namespace (two consumers use the same name without colliding), and its status
// through the virtual workspace; a spec update reaches the projection; a projection deleted
// downstream is put back; deleting a Database deletes its projection and then the Database
// (finalizer); a consumer that binds while the example runs is served too.
func TestPlatformMesh(t *testing.T) {
	// kcptest fails the test, saying to run "make kcp", when the kcp binary is missing.
	kcpServer := kcptest.StartForTest(t, kcptest.Options{})
	ctx := t.Context()
	root := logicalcluster.NewPath("root")

	// The service provider's workspace, set up as README.md does it.
	provider, err := kcpServer.CreateWorkspace(ctx, root, "databases-provider")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kcpServer.CreateSchema(ctx, provider.Path, readCRD(t), "v1"); err != nil {
		t.Fatal(err)
	}
	providerAdmin, err := kcpServer.Client(provider.Path)
	if err != nil {
		t.Fatal(err)
	}
	applyYAML(t, providerAdmin, "config/apiexport.yaml")

	// Two consumers bind the export; one orders a Database before the controller runs.
	consumers := newConsumers(t, kcpServer, provider.Path, "team-a", "team-b")
	teamA, teamB := consumers[0], consumers[1]
	downstream := exampletest.Client(t, fleet.Member("downstream").Config())
	teamA.create(t, readSample(t)) // orders: postgres 16, 10 GiB

	probeAddr := freeAddress(t)
	p := exampletest.Start(t, func(ctx context.Context) error {
		return run(ctx, []string{
			"-kubeconfig", kcpServer.WorkspaceKubeconfigFileForTest(t, provider.Path),
			"-downstream-kubeconfig", exampletest.WriteKubeconfig(t, t.TempDir(), "downstream.kubeconfig", fleet.Member("downstream")),
			"-metrics-bind-address", "0", "-health-probe-bind-address", probeAddr, "-zap-log-level", "error",
		})
	})
	// Team B uses the same name as team A, and the API's defaults.
	teamB.create(t, database("orders", DatabaseSpec{Engine: "mysql", Version: "8.4"}))
	teamB.create(t, database("analytics", DatabaseSpec{}))

	p.Eventually(t, "team-a's orders served", served(downstream, teamA, "orders", map[string]string{"engine": "postgres", "version": "16", "storageGiB": "10"}))
	p.Eventually(t, "team-b's orders served", served(downstream, teamB, "orders", map[string]string{"engine": "mysql", "version": "8.4", "storageGiB": "1"}))
	p.Eventually(t, "team-b's analytics served", served(downstream, teamB, "analytics", map[string]string{"engine": "postgres", "version": "", "storageGiB": "1"}))
	// The fleet readiness check (manager.FleetReadyCheck): the provider has listed the
	// consumers and the controller has synced each one.
	p.Eventually(t, "the fleet ready on /readyz/fleet", func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+probeAddr+"/readyz/fleet", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", resp.Status, body)
		}
		return nil
	})

	// A spec update reaches the projection, and the status observes the new generation.
	p.Eventually(t, "team-a's orders resized", func(ctx context.Context) error {
		db := &Database{}
		if err := teamA.client.Get(ctx, client.ObjectKey{Name: "orders"}, db); err != nil {
			return err
		}
		db.Spec.StorageGiB = 20
		return teamA.client.Update(ctx, db) // a conflict with the controller's writes is retried
	})
	p.Eventually(t, "team-a's orders projection resized", served(downstream, teamA, "orders", map[string]string{"engine": "postgres", "version": "16", "storageGiB": "20"}))

	// A projection deleted downstream is put back.
	gone := &corev1.ConfigMap{}
	if err := downstream.Get(ctx, projectionKeyOf(teamB, "analytics"), gone); err != nil {
		t.Fatal(err)
	}
	if err := downstream.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	p.Eventually(t, "team-b's analytics projection put back", func(ctx context.Context) error {
		cm := &corev1.ConfigMap{}
		if err := downstream.Get(ctx, projectionKeyOf(teamB, "analytics"), cm); err != nil {
			return err
		}
		if cm.UID == gone.UID {
			return errors.New("still the deleted projection")
		}
		return nil
	})

	// Deleting a Database deletes its projection, then the finalizer lets the Database go.
	if err := teamA.client.Delete(ctx, database("orders", DatabaseSpec{})); err != nil {
		t.Fatal(err)
	}
	p.Eventually(t, "team-a's orders gone from kcp and downstream", func(ctx context.Context) error {
		if err := teamA.client.Get(ctx, client.ObjectKey{Name: "orders"}, &Database{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Database is still in team-a's workspace (%v)", err)
		}
		if err := downstream.Get(ctx, projectionKeyOf(teamA, "orders"), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the projection is still downstream (%v)", err)
		}
		return nil
	})
	// Team B's Database of the same name stays.
	p.Eventually(t, "team-b's orders still served", served(downstream, teamB, "orders", map[string]string{"engine": "mysql", "version": "8.4", "storageGiB": "1"}))

	// A consumer that binds while the example runs is served too.
	teamC := newConsumers(t, kcpServer, provider.Path, "team-c")[0]
	teamC.create(t, database("orders", DatabaseSpec{Engine: "postgres", Version: "17", StorageGiB: 5}))
	p.Eventually(t, "team-c's orders served", served(downstream, teamC, "orders", map[string]string{"engine": "postgres", "version": "17", "storageGiB": "5"}))

	p.Stop(t)
}

// consumer is a workspace that binds the Database export.
type consumer struct {
	kcptest.Workspace
	// client is kcp's admin in the workspace, the consumer's user: it bypasses the virtual
	// workspace.
	client client.Client
}

// newConsumers creates a workspace for each name, at once, each binding the export of the
// provider's workspace.
func newConsumers(t *testing.T, s *kcptest.Server, provider logicalcluster.Path, names ...string) []consumer {
	t.Helper()
	consumers := make([]consumer, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			ws, err := s.CreateWorkspace(t.Context(), logicalcluster.NewPath("root"), name)
			if err != nil {
				errs[i] = err
				return
			}
			if _, err := s.Bind(t.Context(), ws.Path, "databases", provider, "databases"); err != nil {
				errs[i] = err
				return
			}
			c, err := client.New(s.WorkspaceConfig(ws.Path), client.Options{Scheme: testScheme(t)})
			consumers[i], errs[i] = consumer{Workspace: ws, client: c}, err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return consumers
}

// create creates a Database in the consumer's workspace, as its user does. The workspace may
// take a moment to serve the API it just bound.
func (c consumer) create(t *testing.T, db *Database) {
	t.Helper()
	eventually(t, "creating Database "+db.Name+" in "+c.Path.String(), func(ctx context.Context) error {
		return client.IgnoreAlreadyExists(c.client.Create(ctx, db))
	})
}

// eventually polls cond until it returns nil, and fails the test with its last error after
// exampletest.WaitTimeout.
func eventually(t *testing.T, what string, cond func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), exampletest.WaitTimeout)
	defer cancel()
	for {
		err := cond(ctx)
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not done within %s: %v", what, exampletest.WaitTimeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func database(name string, spec DatabaseSpec) *Database {
	return &Database{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

func projectionKeyOf(c consumer, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: "consumer-" + c.Cluster.String(), Name: name}
}

// served checks that the consumer's Database has its projection downstream with data, marked
// with the Database (its consumer's cluster, name and UID), and a Ready status of its current generation that
// names the projection.
func served(downstream client.Client, c consumer, name string, data map[string]string) func(context.Context) error {
	return func(ctx context.Context) error {
		key := projectionKeyOf(c, name)
		cm := &corev1.ConfigMap{}
		if err := downstream.Get(ctx, key, cm); err != nil {
			return fmt.Errorf("projection %s: %w", key, err)
		}
		if !maps.Equal(cm.Data, data) {
			return fmt.Errorf("projection %s has data %v, want %v", key, cm.Data, data)
		}
		db := &Database{}
		if err := c.client.Get(ctx, client.ObjectKey{Name: name}, db); err != nil {
			return fmt.Errorf("Database %s of %s: %w", name, c.Path, err)
		}
		owner, err := ownership.GetOwner(cm)
		if err != nil {
			return fmt.Errorf("projection %s: %w", key, err)
		}
		if owner.Cluster != mcr.ClusterName(c.Cluster.String()) || owner.Name != name || owner.UID != db.UID || owner.Kind != "Database" {
			return fmt.Errorf("projection %s is marked with %s, want Database %s of %s (uid %s)", key, owner, name, c.Cluster, db.UID)
		}
		want := DatabaseStatus{Phase: "Ready", Downstream: key.String(), ObservedGeneration: db.Generation}
		if db.Status != want {
			return fmt.Errorf("Database %s of %s has status %+v, want %+v", name, c.Path, db.Status, want)
		}
		if !slices.Contains(db.Finalizers, "platform-mesh.examples.mcr.dev/downstream") {
			return fmt.Errorf("Database %s of %s has finalizers %v, want the example's", name, c.Path, db.Finalizers)
		}
		return nil
	}
}

// testScheme knows the client-go types and Database.
func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(s), AddToScheme(s)); err != nil {
		t.Fatal(err)
	}
	return s
}

// readCRD reads config/crd.yaml.
func readCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	b, err := os.ReadFile("config/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(b, crd); err != nil {
		t.Fatalf("config/crd.yaml: %v", err)
	}
	return crd
}

// readSample reads sample.yaml, the Database of README.md.
func readSample(t *testing.T) *Database {
	t.Helper()
	b, err := os.ReadFile("sample.yaml")
	if err != nil {
		t.Fatal(err)
	}
	db := &Database{}
	if err := yaml.UnmarshalStrict(b, db); err != nil {
		t.Fatalf("sample.yaml: %v", err)
	}
	return db
}

// applyYAML creates the object of a YAML file with c.
func applyYAML(t *testing.T, c client.Client, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &obj.Object); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if err := c.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating %s of %s: %v", obj.GetKind(), file, err)
	}
}

// freeAddress returns a loopback address with a port nothing listens on.
func freeAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
