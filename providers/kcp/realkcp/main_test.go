// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package realkcp_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kcp-dev/logicalcluster/v3"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kcp"
	"mcr.dev/providers/kcp/kcptest"
)

// server is the kcp every test of the package shares; each test works in workspaces of its own.
var server *kcptest.Server

func TestMain(m *testing.M) {
	// The tests give the provider and the manager loggers of their own.
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	kcptest.Main(m, kcptest.Options{}, func(s *kcptest.Server) error {
		server = s
		return nil
	})
}

// root is the root workspace, the parent of every workspace the tests create.
var root = logicalcluster.NewPath("root")

// waitTimeout bounds every wait for the provider or a controller to catch up with kcp.
const waitTimeout = 2 * time.Minute

// exportName is the name of every test's APIExport, and so of its APIExportEndpointSlice.
const exportName = "widgets"

// widgetGVK is the kind the APIExport exports: a cluster-scoped Widget with a status
// subresource whose status.cluster the tests' controller sets to the cluster it reconciled in.
var widgetGVK = schema.GroupVersionKind{Group: "example.mcr.dev", Version: "v1", Kind: "Widget"}

func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + widgetGVK.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: widgetGVK.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "widgets", Singular: "widget", Kind: widgetGVK.Kind, ListKind: widgetGVK.Kind + "List",
			},
			Scope: apiextensionsv1.ClusterScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: widgetGVK.Version, Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"color": str}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"cluster": str}},
					},
				}},
			}},
		},
	}
}

// newWidget returns an empty Widget named name.
func newWidget(name string) *unstructured.Unstructured {
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(widgetGVK)
	w.SetName(name)
	return w
}

var seq atomic.Int64

// uniqueName returns a workspace name for the test that no other test of the binary uses.
func uniqueName(hint string) string {
	return fmt.Sprintf("%s-%d", hint, seq.Add(1))
}

// newExport creates a provider workspace with the Widget APIResourceSchema and the APIExport
// "widgets", as a service provider does; the workspace is deleted when the test ends.
func newExport(t *testing.T) kcptest.Workspace {
	t.Helper()
	ws := newWorkspace(t, "provider")
	s, err := server.CreateSchema(t.Context(), ws.Path, widgetCRD(), "v1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.CreateExport(t.Context(), ws.Path, exportName, []string{s.Name}); err != nil {
		t.Fatal(err)
	}
	return ws
}

// newWorkspace creates a workspace in root, deleted (without waiting) when the test ends.
func newWorkspace(t *testing.T, hint string) kcptest.Workspace {
	t.Helper()
	ws, err := server.CreateWorkspace(t.Context(), root, uniqueName(hint))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := server.Client(root)
		if err == nil {
			_, name := ws.Path.Split()
			err = client.IgnoreNotFound(c.Delete(context.Background(), &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
		}
		if err != nil {
			t.Logf("deleting workspace %s: %v", ws.Path, err)
		}
	})
	return ws
}

// consumer is a workspace that binds the test's APIExport.
type consumer struct {
	kcptest.Workspace
	binding string
}

// name is the consumer's cluster name in the fleet: its logical cluster.
func (c consumer) name() multicluster.ClusterName { return multicluster.ClusterName(c.Cluster) }

// newConsumers creates n consumer workspaces at once, each with a Bound APIBinding of the
// APIExport of the provider workspace.
func newConsumers(t *testing.T, provider kcptest.Workspace, n int) []consumer {
	t.Helper()
	consumers := make([]consumer, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range consumers {
		name := uniqueName("consumer")
		wg.Go(func() {
			ws, err := server.CreateWorkspace(t.Context(), root, name)
			if err != nil {
				errs[i] = err
				return
			}
			consumers[i] = consumer{Workspace: ws, binding: exportName}
			_, errs[i] = server.Bind(t.Context(), ws.Path, exportName, provider.Path, exportName)
		})
	}
	wg.Wait()
	for _, c := range consumers {
		if !c.Path.Empty() {
			t.Cleanup(func() { deleteWorkspaceNoWait(c.Workspace) })
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return consumers
}

func deleteWorkspaceNoWait(ws kcptest.Workspace) {
	parent, name := ws.Path.Split()
	if c, err := server.Client(parent); err == nil {
		_ = c.Delete(context.Background(), &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
}

// adminClient is kcp's admin in the consumer workspace, as a user of the workspace: it bypasses
// the provider and the virtual workspace.
func (c consumer) adminClient(t *testing.T) client.Client {
	t.Helper()
	cl, err := server.Client(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// createWidget creates a Widget in the consumer workspace, as its user does.
func (c consumer) createWidget(t *testing.T, name string) {
	t.Helper()
	eventually(t, "creating Widget "+name+" in "+c.Path.String(), func() error {
		return client.IgnoreAlreadyExists(c.adminClient(t).Create(t.Context(), newWidget(name)))
	})
}

// widgetStatusCluster reads status.cluster of a Widget of the consumer workspace.
func (c consumer) widgetStatusCluster(ctx context.Context, t *testing.T, name string) (string, error) {
	w := newWidget(name)
	if err := c.adminClient(t).Get(ctx, client.ObjectKey{Name: name}, w); err != nil {
		return "", err
	}
	v, _, err := unstructured.NestedString(w.Object, "status", "cluster")
	return v, err
}

// providerOptions are the provider's options in the tests: short retries, and the test's log.
func providerOptions(logs *providertest.LogBuffer) kcp.Options {
	return kcp.Options{Options: providertest.TestKitOptions(kit.Options{CacheSyncTimeout: 30 * time.Second}, logs)}
}

// testLogs returns a log buffer whose last lines the test prints when it fails.
func testLogs(t *testing.T) *providertest.LogBuffer {
	t.Helper()
	logs := &providertest.LogBuffer{}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		lines := logs.Lines()
		if len(lines) > 80 {
			lines = lines[len(lines)-80:]
		}
		t.Logf("last log lines:\n%s\nlast kcp lines:\n%s", strings.Join(lines, "\n"), server.Logs())
	})
	return logs
}

// eventually polls check until it returns nil, failing the test after waitTimeout.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	providertest.Eventually(t, waitTimeout, what, check)
}
