// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package realkcp_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	"k8s.io/client-go/rest"
	upstreammanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"mcr.dev/conformance"
	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kcp"
	"mcr.dev/providers/kcp/kcptest"
)

// configMapsClaim is the permission claim of the conformance run's APIExport: the suite writes
// ConfigMaps into each member directly and reads them through the engaged cluster, which reaches
// a consumer's ConfigMaps through the virtual workspace only when the export claims them and the
// binding accepts the claim.
var configMapsClaim = apisv1alpha1.PermissionClaim{
	GroupResource: apisv1alpha1.GroupResource{Group: "", Resource: "configmaps"},
	All:           true,
}

// realKCPHarness makes each conformance member a consumer workspace of real kcp that binds the
// run's APIExport (accepting its claim on ConfigMaps); the member is engaged under the
// workspace's logical cluster name, and its direct client is kcp's admin in the workspace.
// Deleting a member deletes its APIBinding, then its workspace.
type realKCPHarness struct {
	provider kcptest.Workspace
	// newProvider builds the provider under test for the provider workspace's config; nil
	// builds mcr's kcp provider.
	newProvider func(config *rest.Config) (multicluster.Provider, error)

	// link, when set, is a forwarder before kcp that every connection of the providers goes
	// through (see StopSource).
	link *envtest.Forwarder

	mu      sync.Mutex
	members map[string]kcptest.Workspace // by member ID
}

var (
	_ conformance.Harness         = &realKCPHarness{}
	_ conformance.SourceRestarter = &realKCPHarness{}
)

// providerConfig returns the config of the providers under test: the provider workspace's,
// dialing kcp through the link when there is one. The slice lists kcp's own URL for its
// virtual workspace, so the link is put in the dialer rather than in the config's host, which
// reroutes the provider's requests to the endpoints too.
func (h *realKCPHarness) providerConfig() *rest.Config {
	cfg := server.WorkspaceConfig(h.provider.Path)
	if h.link == nil {
		return cfg
	}
	u, err := url.Parse(server.URL())
	if err != nil {
		panic(err) // kcptest's URL always parses
	}
	kcpPort, linkAddr := u.Port(), strings.TrimPrefix(h.link.URL(), "https://")
	var d net.Dialer
	cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if _, port, err := net.SplitHostPort(addr); err == nil && port == kcpPort {
			addr = linkAddr
		}
		return d.DialContext(ctx, network, addr)
	}
	return cfg
}

func (h *realKCPHarness) NewProvider(context.Context) (multicluster.Provider, error) {
	if h.newProvider != nil {
		return h.newProvider(h.providerConfig())
	}
	return kcp.New(h.providerConfig(), exportName, kcp.Options{Options: providertest.TestKitOptions(kit.Options{CacheSyncTimeout: 30 * time.Second}, nil)})
}

func (h *realKCPHarness) CreateMember(ctx context.Context, id string) (conformance.Member, error) {
	ws, err := server.CreateWorkspace(ctx, root, "cf-"+id)
	if err != nil {
		return conformance.Member{}, err
	}
	h.mu.Lock()
	h.members[id] = ws
	h.mu.Unlock()
	direct, err := server.Client(ws.Path)
	if err != nil {
		return conformance.Member{}, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: metav1.NamespaceDefault}}
	if err := client.IgnoreAlreadyExists(direct.Create(ctx, ns)); err != nil {
		return conformance.Member{}, fmt.Errorf("creating namespace default in %s: %w", ws.Path, err)
	}
	accepted := apisv1alpha1.AcceptablePermissionClaim{PermissionClaim: configMapsClaim, State: apisv1alpha1.ClaimAccepted}
	if _, err := server.Bind(ctx, ws.Path, exportName, h.provider.Path, exportName, accepted); err != nil {
		return conformance.Member{}, err
	}
	return conformance.Member{ID: id, Name: multicluster.ClusterName(ws.Cluster), Client: direct}, nil
}

// StopSource takes the link down: the providers' connections to kcp are refused and open ones
// dropped, which to them is a restart of kcp, while kcp keeps serving the suite's own clients
// (and the package's other tests).
func (h *realKCPHarness) StopSource(context.Context) (func(context.Context) error, error) {
	if h.link == nil {
		return nil, errors.New("the harness has no link before kcp to take down")
	}
	h.link.Down()
	return func(context.Context) error { return h.link.Up() }, nil
}

func (h *realKCPHarness) member(id string) (kcptest.Workspace, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ws, ok := h.members[id]
	if !ok {
		return kcptest.Workspace{}, fmt.Errorf("no member %q", id)
	}
	return ws, nil
}

// UpdateMember labels the member's APIBinding: a change that is not a change of the member.
func (h *realKCPHarness) UpdateMember(ctx context.Context, m conformance.Member) error {
	ws, err := h.member(m.ID)
	if err != nil {
		return err
	}
	c, err := server.Client(ws.Path)
	if err != nil {
		return err
	}
	b := &apisv1alpha1.APIBinding{}
	if err := c.Get(ctx, client.ObjectKey{Name: exportName}, b); err != nil {
		return err
	}
	b.Labels = map[string]string{"conformance.mcr.dev/touched": time.Now().Format("150405.000000")}
	return c.Update(ctx, b)
}

// DeleteMember deletes the member's APIBinding, which disengages it, then its workspace
// (without waiting for kcp to finish that).
func (h *realKCPHarness) DeleteMember(ctx context.Context, m conformance.Member) error {
	ws, err := h.member(m.ID)
	if err != nil {
		return err
	}
	if err := server.DeleteBinding(ctx, ws.Path, exportName); err != nil {
		return err
	}
	deleteWorkspaceNoWait(ws)
	h.mu.Lock()
	delete(h.members, m.ID)
	h.mu.Unlock()
	return nil
}

// TestConformance runs the mcr conformance suite's core tests and SourceRestart against the
// provider on real kcp, with its default options (APIBindings, ready when their Ready condition
// is True); the source's outage is a forwarder before kcp taken down. The other extended
// features are left to the front-proxy run
// (providers/kcp/conformance_test.go): kcp owns a binding's Ready condition, so a harness cannot
// toggle it (MemberReadiness); the suite's probe fails the first Engage of a cluster whose name
// contains the member's ID, and real kcp names a member after its logical cluster, a name the
// harness cannot choose (EngageErrorRecovery); and 30 workspaces at once would add minutes to CI
// (Scale).
func TestConformance(t *testing.T) {
	h := newHarness(t, nil)
	u, err := url.Parse(server.URL())
	if err != nil {
		t.Fatal(err)
	}
	if h.link, err = envtest.StartForwarder(u.Host); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.link.Close)
	conformance.Run(t, h, conformance.Options{
		Features: []conformance.Feature{conformance.SourceRestart},
		Implementation: conformance.Implementation{
			Organization: "mcr",
			Project:      "mcr.dev/providers/kcp",
			Version:      "on kcp " + kcptest.Version,
		},
	})
}

// newHarness creates the run's provider workspace with an APIExport of Widgets that claims
// ConfigMaps, and a harness whose members bind it.
func newHarness(t *testing.T, newProvider func(*rest.Config) (multicluster.Provider, error)) *realKCPHarness {
	t.Helper()
	provider, err := server.CreateWorkspace(t.Context(), root, uniqueName("cf-provider"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteWorkspaceNoWait(provider) })
	s, err := server.CreateSchema(t.Context(), provider.Path, widgetCRD(), "v1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.CreateExport(t.Context(), provider.Path, exportName, []string{s.Name}, configMapsClaim); err != nil {
		t.Fatal(err)
	}
	return &realKCPHarness{provider: provider, members: map[string]kcptest.Workspace{}, newProvider: newProvider}
}

// TestConformanceUnderUpstreamManager runs the core tests with mcr's kcp provider under
// sigs.k8s.io/multicluster-runtime's manager, as a program written for multicluster-runtime
// runs it: the manager starts the provider, engages its runnables and serves GetCluster and
// the fleet's field indexer. The manager's own cluster is the provider workspace.
func TestConformanceUnderUpstreamManager(t *testing.T) {
	h := newHarness(t, nil)
	assess(t, h, conformance.Options{
		Mode:          conformance.ModeManager,
		ManagerConfig: server.WorkspaceConfig(h.provider.Path),
		NewManager: func(config *rest.Config, p multicluster.Provider, r conformance.Runnable) (conformance.Manager, error) {
			mgr, err := upstreammanager.New(config, p, conformance.ManagerOptions())
			if err != nil {
				return nil, err
			}
			return mgr, mgr.Add(r)
		},
		Implementation: conformance.Implementation{
			Organization: "mcr",
			Project:      "mcr.dev/providers/kcp under multicluster-runtime's manager",
			Version:      "on kcp " + kcptest.Version,
		},
	}, nil)
}

// assess runs the suite's core tests and fails t unless exactly the tests in fails failed
// (and every other core test passed).
func assess(t *testing.T, h conformance.Harness, o conformance.Options, fails map[string]string) {
	t.Helper()
	rep, err := conformance.Assess(t.Context(), h, o, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + rep.Markdown())
	for _, r := range rep.Tests {
		want := conformance.Passed
		if reason, ok := fails[r.ID]; ok {
			want = conformance.Failed
			t.Logf("%s fails as pinned (%s): %s", r.ID, reason, r.Message)
		}
		if r.Feature != conformance.Core {
			want = conformance.NotSupported
		}
		if r.Result != want {
			t.Errorf("%s: %s, want %s: %s", r.ID, r.Result, want, r.Message)
		}
	}
}
