// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcptest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"mcr.dev/core/envtest"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
)

// Defaults of Options.
const (
	// DefaultStartTimeout bounds Start: kcp is ready in 30-50 seconds on an idle 2-core
	// machine, and much later on a busy one.
	DefaultStartTimeout = 4 * time.Minute
	// DefaultStopGrace is how long Stop waits after SIGTERM before it kills kcp.
	DefaultStopGrace = 30 * time.Second
)

// adminContext is the context of kcp's admin.kubeconfig whose user (kcp-admin, group
// system:kcp:admin) may do everything in every workspace; its cluster is the root workspace.
const adminContext = "root"

// Options configure Start. The zero value is valid.
type Options struct {
	// Binary is the kcp binary to run. Defaults to Binary(): $MCR_KCP_BINARY, else the
	// repository's bin/kcp/<Version>/kcp.
	Binary string

	// RootDir is kcp's --root-directory (its embedded etcd, certificates and
	// admin.kubeconfig); it is kept after Stop. Defaults to a new temporary directory, which
	// Stop removes.
	RootDir string

	// Output receives kcp's log lines. Defaults to none; the last lines are kept either way
	// and quoted when kcp fails to start or exits early.
	Output io.Writer

	// Args are further flags of `kcp start`, e.g. "--feature-gates=...". The flags Start
	// sets itself (--root-directory, --bind-address, --secure-port and the embedded etcd
	// ports) must not be among them.
	Args []string

	// StartTimeout bounds Start. Defaults to DefaultStartTimeout.
	StartTimeout time.Duration
}

// managedFlags are the flags Start decides.
var managedFlags = []string{"--root-directory", "--bind-address", "--secure-port", "--embedded-etcd-client-port", "--embedded-etcd-peer-port"}

// Server is a running kcp. Its methods are safe for concurrent use.
type Server struct {
	rootDir       string
	removeRootDir bool
	url           string
	admin         *rest.Config // kcp-admin, host without a /clusters path
	proc          *envtest.Process

	stopOnce sync.Once
	stopErr  error
}

// Start starts kcp and returns once it serves requests, its root workspace included. ctx bounds
// the start only; kcp runs until Stop. When kcp cannot bind its ports (another process took one
// of the free ports it was given), Start tries again with others. On error nothing is left
// running.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Binary == "" {
		b, err := Binary()
		if err != nil {
			return nil, err
		}
		opts.Binary = b
	}
	for _, arg := range opts.Args {
		name, _, _ := strings.Cut(arg, "=")
		for _, managed := range managedFlags {
			if name == managed {
				return nil, fmt.Errorf("kcptest: Options.Args sets %s, which Start decides", managed)
			}
		}
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	const attempts = 3
	var err error
	for range attempts {
		var s *Server
		s, err = startOnce(ctx, opts)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, errPortTaken) || ctx.Err() != nil {
			break
		}
	}
	return nil, err
}

// errPortTaken marks a start that failed because a port was taken.
var errPortTaken = errors.New("a port was taken")

func startOnce(ctx context.Context, opts Options) (_ *Server, err error) {
	// Not the named result: a failing return sets that to nil before the deferred Stop runs.
	s := &Server{rootDir: opts.RootDir}
	if s.rootDir == "" {
		if s.rootDir, err = os.MkdirTemp("", "mcr-kcp-"); err != nil {
			return nil, fmt.Errorf("kcptest: creating kcp's root directory: %w", err)
		}
		s.removeRootDir = true
	} else if err := os.MkdirAll(s.rootDir, 0o700); err != nil {
		return nil, fmt.Errorf("kcptest: creating kcp's root directory: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Stop())
		}
	}()
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	s.url = "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	args := append([]string{
		"start",
		"--root-directory=" + s.rootDir,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[0]),
		"--embedded-etcd-client-port=" + strconv.Itoa(ports[1]),
		"--embedded-etcd-peer-port=" + strconv.Itoa(ports[2]),
	}, opts.Args...)
	if s.proc, err = envtest.StartProcess("kcp", opts.Binary, args, opts.Output); err != nil {
		return nil, err
	}
	if err := s.waitReady(ctx); err != nil {
		if s.proc.Exited() && strings.Contains(s.proc.Output(), "address already in use") {
			return nil, fmt.Errorf("kcptest: %w: %w", errPortTaken, err)
		}
		return nil, fmt.Errorf("kcptest: %w", err)
	}
	return s, nil
}

// waitReady waits until kcp has written its admin.kubeconfig, answers /readyz and serves the
// workspace and APIExport APIs in the root workspace. Its error says why, with kcp's last
// output.
func (s *Server) waitReady(ctx context.Context) error {
	kubeconfig := s.KubeconfigPath()
	return s.proc.WaitUntil(ctx, func() error { return s.ready(ctx, kubeconfig) })
}

// ready checks one step of readiness, loading the admin config once it is there.
func (s *Server) ready(ctx context.Context, kubeconfig string) error {
	if s.admin == nil {
		if _, err := os.Stat(kubeconfig); err != nil {
			return fmt.Errorf("no %s yet", filepath.Base(kubeconfig))
		}
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: adminContext},
		).ClientConfig()
		if err != nil {
			return fmt.Errorf("loading %s: %w", kubeconfig, err)
		}
		// The kubeconfig names the root workspace; the base config names none.
		cfg.Host = s.url
		cfg.QPS, cfg.Burst = 50, 100
		s.admin = cfg
	}
	hc, err := rest.HTTPClientFor(s.admin)
	if err != nil {
		return err
	}
	defer hc.CloseIdleConnections()
	reqCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := envtest.ProbeOK(reqCtx, hc, s.url+"/readyz"); err != nil {
		return err
	}
	c, err := s.Client(logicalcluster.NewPath("root"))
	if err != nil {
		return err
	}
	for _, list := range []client.ObjectList{newWorkspaceList(), newAPIExportList()} {
		if err := c.List(reqCtx, list); err != nil {
			return fmt.Errorf("listing %T in the root workspace: %w", list, err)
		}
	}
	// Workspaces of the default type resolve their parent's type, root:root.
	if err := c.Get(reqCtx, client.ObjectKey{Name: "root"}, &tenancyv1alpha1.WorkspaceType{}); err != nil {
		return fmt.Errorf("reading the WorkspaceType root:root: %w", err)
	}
	return nil
}

// URL returns kcp's base URL, https://127.0.0.1:<port>, with no workspace path.
func (s *Server) URL() string { return s.url }

// RootDir returns kcp's root directory.
func (s *Server) RootDir() string { return s.rootDir }

// KubeconfigPath returns the admin.kubeconfig kcp wrote into its root directory. Its current
// context, root, is the admin in the root workspace; context base has no workspace path.
func (s *Server) KubeconfigPath() string { return filepath.Join(s.rootDir, "admin.kubeconfig") }

// BaseConfig returns a config of kcp's admin (kcp-admin, allowed everything in every workspace)
// for kcp's base URL, without a workspace path: append one (logicalcluster.Path.RequestPath),
// or a virtual workspace's path, to the host.
func (s *Server) BaseConfig() *rest.Config { return rest.CopyConfig(s.admin) }

// Config returns the admin's config for the root workspace: <URL>/clusters/root.
func (s *Server) Config() *rest.Config { return s.WorkspaceConfig(logicalcluster.NewPath("root")) }

// WorkspaceConfig returns the admin's config for a workspace path (e.g. root:org:team) or a
// logical cluster name: <URL>/clusters/<path>.
func (s *Server) WorkspaceConfig(path logicalcluster.Path) *rest.Config {
	cfg := s.BaseConfig()
	cfg.Host += path.RequestPath()
	return cfg
}

// WorkspaceKubeconfig returns kcp's admin kubeconfig with its current context pointed at the
// workspace path, as `kubectl ws use <path>` leaves it: for programs that take a -kubeconfig.
func (s *Server) WorkspaceKubeconfig(path logicalcluster.Path) ([]byte, error) {
	cfg, err := clientcmd.LoadFromFile(s.KubeconfigPath())
	if err != nil {
		return nil, fmt.Errorf("kcptest: %w", err)
	}
	cfg.CurrentContext = "root"
	kctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return nil, fmt.Errorf("kcptest: %s has no context %q", s.KubeconfigPath(), cfg.CurrentContext)
	}
	cluster, ok := cfg.Clusters[kctx.Cluster]
	if !ok {
		return nil, fmt.Errorf("kcptest: %s has no cluster %q", s.KubeconfigPath(), kctx.Cluster)
	}
	cluster.Server = s.URL() + path.RequestPath()
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("kcptest: %w", err)
	}
	return data, nil
}

// Client returns an admin client of a workspace path or logical cluster, with Scheme.
func (s *Server) Client(path logicalcluster.Path) (client.Client, error) {
	return client.New(s.WorkspaceConfig(path), client.Options{Scheme: scheme})
}

// Logs returns the last lines kcp wrote.
func (s *Server) Logs() string { return s.proc.Output() }

// Stop stops kcp (SIGTERM, then SIGKILL after DefaultStopGrace) and removes its root directory
// unless Options.RootDir named it. It is safe to call more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		if s.proc != nil {
			s.stopErr = s.proc.Stop(DefaultStopGrace)
		}
		if s.removeRootDir {
			s.stopErr = errors.Join(s.stopErr, os.RemoveAll(s.rootDir))
		}
	})
	return s.stopErr
}

// freePorts returns n distinct free TCP ports on 127.0.0.1. They are free when freePorts
// returns; Start retries when kcp finds one taken.
func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("kcptest: finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		addr, ok := l.Addr().(*net.TCPAddr)
		if !ok {
			return nil, fmt.Errorf("kcptest: listener address %v is not TCP", l.Addr())
		}
		ports = append(ports, addr.Port)
	}
	return ports, nil
}
