// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardentest

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"mcr.dev/core/envtest"
)

const (
	// Version is the Gardener release `make gardener-apiserver` builds (hack/tools/gardener).
	Version = "v1.135.0"

	// BinaryEnv names a gardener-apiserver binary to use instead of the repository's
	// bin/gardener/<Version>/gardener-apiserver.
	BinaryEnv = "MCR_GARDENER_APISERVER"

	// RequireEnv names the variable that, set to anything, makes a missing gardener-apiserver
	// a test failure instead of a skip; CI sets it, so that the real-garden tests cannot
	// silently not run.
	RequireEnv = "MCR_REQUIRE_GARDENER"
)

// ErrNotBuilt is returned (wrapped) by Binary when no gardener-apiserver is found.
var ErrNotBuilt = errors.New("gardener-apiserver is not built")

// Binary returns the gardener-apiserver to run: $MCR_GARDENER_APISERVER, else
// bin/gardener/<Version>/gardener-apiserver in the nearest directory above the working directory
// that holds go.work (where `make gardener-apiserver` writes it).
func Binary() (string, error) {
	if p := os.Getenv(BinaryEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s: %w", BinaryEnv, err)
		}
		return p, nil
	}
	root, err := repositoryRoot()
	if err != nil {
		return "", fmt.Errorf("%w: %w (set $%s)", ErrNotBuilt, err, BinaryEnv)
	}
	p := filepath.Join(root, "bin", "gardener", Version, "gardener-apiserver")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%w: no %s; build it with `make gardener-apiserver` (about 20 minutes once) or set $%s", ErrNotBuilt, p, BinaryEnv)
	}
	return p, nil
}

// envtestBinaries returns the kube-apiserver and etcd that mcr.dev/core/envtest uses.
func envtestBinaries() (apiserver, etcd string, err error) {
	dir := ""
	for _, env := range []string{envtest.AssetsEnv, envtest.KubebuilderAssetsEnv} {
		if dir = os.Getenv(env); dir != "" {
			break
		}
	}
	if dir == "" {
		root, err := repositoryRoot()
		if err != nil {
			return "", "", err
		}
		dir = filepath.Join(root, "bin", "envtest", envtest.KubernetesVersion)
	}
	apiserver, etcd = filepath.Join(dir, "kube-apiserver"), filepath.Join(dir, "etcd")
	for _, p := range []string{apiserver, etcd} {
		if _, err := os.Stat(p); err != nil {
			return "", "", fmt.Errorf("%w (build them with `make envtest`)", err)
		}
	}
	return apiserver, etcd, nil
}

func repositoryRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work above the working directory")
		}
		dir = parent
	}
}

// Options configure a Garden.
type Options struct {
	// ShootServers is how many kube-apiservers play shoot control planes. Default: 3.
	ShootServers int

	// Output receives every server's output, one line at a time, prefixed with its name.
	// Default: discarded (the last lines of a server that fails to start are in the error).
	Output io.Writer

	// StartTimeout bounds the start of all servers. Default: 4 minutes (a busy 2-core machine
	// starts five apiservers and gardener-apiserver at once).
	StartTimeout time.Duration
}

func (o *Options) setDefaults() {
	if o.ShootServers <= 0 {
		o.ShootServers = 3
	}
	if o.Output == nil {
		o.Output = io.Discard
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 4 * time.Minute
	}
}

// stopGrace is how long a server may take to stop after SIGTERM.
const stopGrace = 10 * time.Second

// Garden is a running garden: etcd, the garden kube-apiserver with gardener-apiserver aggregated
// into it, and the shoot servers.
type Garden struct {
	dir      string
	etcd     *envtest.Process
	garden   *kubeAPIServer
	gardener *envtest.Process
	shoots   []*ShootServer

	mu     sync.Mutex
	trust  map[string]*shootTrust // by "<namespace>/<shoot>"
	closed bool
}

// Start starts a garden. ctx bounds the start only; Stop ends the servers.
func Start(ctx context.Context, opts Options) (_ *Garden, err error) {
	opts.setDefaults()
	gardenerPath, err := Binary()
	if err != nil {
		return nil, err
	}
	apiserverPath, etcdPath, err := envtestBinaries()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	dir, err := os.MkdirTemp("", "mcr-gardentest-")
	if err != nil {
		return nil, err
	}
	g := &Garden{dir: dir, trust: map[string]*shootTrust{}}
	defer func() {
		if err != nil {
			g.Stop()
		}
	}()

	etcdURL, err := g.startEtcd(ctx, etcdPath, opts.Output)
	if err != nil {
		return nil, err
	}

	// The garden kube-apiserver and the shoot servers start together: most of a start is
	// waiting for storage and post-start hooks.
	frontProxyCA, err := newAuthority("mcr-gardentest-front-proxy-ca", false)
	if err != nil {
		return nil, err
	}
	servers := []*kubeAPIServer{{name: "garden", frontProxyCA: frontProxyCA}}
	for i := range opts.ShootServers {
		servers = append(servers, &kubeAPIServer{name: "shoot-" + strconv.Itoa(i)})
	}
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() { errs[i] = s.start(ctx, filepath.Join(dir, s.name), apiserverPath, etcdURL, opts.Output) })
	}
	wg.Wait()
	g.garden = servers[0]
	for _, s := range servers[1:] {
		if s.proc != nil {
			g.shoots = append(g.shoots, &ShootServer{kubeAPIServer: s})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, s := range g.shoots {
		if err := s.grantShootAdmins(ctx); err != nil {
			return nil, err
		}
	}
	if err := g.startGardener(ctx, gardenerPath, etcdURL, opts.Output); err != nil {
		return nil, err
	}
	return g, nil
}

// Stop stops every server and removes the garden's files. It is safe to call more than once.
func (g *Garden) Stop() {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	g.closed = true
	g.mu.Unlock()
	var procs []*envtest.Process
	if g.gardener != nil {
		procs = append(procs, g.gardener)
	}
	if g.garden != nil && g.garden.proc != nil {
		procs = append(procs, g.garden.proc)
	}
	for _, s := range g.shoots {
		procs = append(procs, s.proc)
	}
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(func() { _ = p.Stop(stopGrace) })
	}
	wg.Wait()
	if g.etcd != nil {
		_ = g.etcd.Stop(stopGrace)
	}
	_ = os.RemoveAll(g.dir)
}

// Config returns an admin rest.Config for the garden cluster: its kube-apiserver, which serves
// the Gardener API groups through gardener-apiserver.
func (g *Garden) Config() *rest.Config { return g.garden.config() }

// Host returns the URL of the garden kube-apiserver.
func (g *Garden) Host() string { return g.garden.host() }

// ShootServers returns the kube-apiservers that play shoot control planes.
func (g *Garden) ShootServers() []*ShootServer { return g.shoots }

func (g *Garden) startEtcd(ctx context.Context, path string, out io.Writer) (string, error) {
	clientPort, err := envtest.FreePort()
	if err != nil {
		return "", err
	}
	peerPort, err := envtest.FreePort()
	if err != nil {
		return "", err
	}
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	p, err := envtest.StartProcess("etcd", path, []string{
		"--name=realgarden", "--data-dir=" + filepath.Join(g.dir, "etcd"),
		"--listen-client-urls=" + clientURL, "--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=realgarden=" + peerURL,
		"--unsafe-no-fsync=true", "--log-level=warn",
	}, out)
	if err != nil {
		return "", err
	}
	g.etcd = p
	return clientURL, waitOK(ctx, p, httpClient(nil), clientURL+"/health")
}

// gardenerNamespace and gardenerService are where the garden's APIServices point: an
// ExternalName Service for 127.0.0.1, so that the aggregator reaches gardener-apiserver running
// beside it without a Pod network.
const (
	gardenerNamespace = "garden"
	gardenerService   = "gardener-apiserver"
)

// startGardener runs gardener-apiserver on etcd with the garden as its core API (delegated
// authentication and authorization, informers), and registers its API groups in the garden.
func (g *Garden) startGardener(ctx context.Context, path, etcdURL string, out io.Writer) error {
	dir := filepath.Join(g.dir, "gardener-apiserver")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// Its serving certificate comes from the garden's CA, which the APIServices trust, with the
	// name the aggregator checks: <service>.<namespace>.svc.
	cert, key, err := g.garden.ca.issue(&x509.Certificate{
		Subject:     pkixName("gardener-apiserver"),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{gardenerService + "." + gardenerNamespace + ".svc", "localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	})
	if err != nil {
		return err
	}
	kubeconfig, err := g.garden.kubeconfig()
	if err != nil {
		return err
	}
	if err := writeFiles(dir, map[string][]byte{"tls.crt": cert, "tls.key": key, "garden.kubeconfig": kubeconfig}); err != nil {
		return err
	}
	port, err := envtest.FreePort()
	if err != nil {
		return err
	}
	kubeconfigPath := filepath.Join(dir, "garden.kubeconfig")
	p, err := envtest.StartProcess("gardener-apiserver", path, []string{
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + filepath.Join(dir, "tls.crt"),
		"--tls-private-key-file=" + filepath.Join(dir, "tls.key"),
		"--etcd-servers=" + etcdURL,
		"--kubeconfig=" + kubeconfigPath,
		"--authentication-kubeconfig=" + kubeconfigPath,
		"--authorization-kubeconfig=" + kubeconfigPath,
		"--authorization-always-allow-paths=/healthz,/readyz,/livez",
		"--cluster-identity=mcr-gardentest",
		"--profiling=false",
		"--log-level=info",
		"--log-format=text",
	}, out)
	if err != nil {
		return err
	}
	g.gardener = p
	url := "https://127.0.0.1:" + strconv.Itoa(port)
	if err := waitOK(ctx, p, httpClient(g.garden.tlsConfig()), url+"/readyz"); err != nil {
		return err
	}
	return g.registerGardener(ctx, url, port)
}

// registerGardener makes the garden serve every API group version gardener-apiserver serves.
func (g *Garden) registerGardener(ctx context.Context, url string, port int) error {
	hc := httpClient(g.garden.tlsConfig())
	// gardener-apiserver is ready before its delegated authentication has read the garden's
	// client CA, and until then the admin's certificate is anonymous and forbidden: retry.
	var groups metav1.APIGroupList
	if err := g.gardener.WaitUntil(ctx, func() error {
		return getJSON(ctx, hc, url+"/apis", &groups)
	}); err != nil {
		return fmt.Errorf("discovering gardener-apiserver's API groups: %w", err)
	}
	c, err := client.New(g.garden.config(), client.Options{})
	if err != nil {
		return err
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gardenerNamespace}},
		&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: gardenerNamespace, Name: gardenerService},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
		},
	}
	var paths []string
	for _, group := range groups.Groups {
		for _, v := range group.Versions {
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "apiregistration.k8s.io/v1",
				"kind":       "APIService",
				"metadata":   map[string]any{"name": v.Version + "." + group.Name},
				"spec": map[string]any{
					"group": group.Name, "version": v.Version,
					"groupPriorityMinimum": int64(10000), "versionPriority": int64(100),
					"caBundle": g.garden.ca.certPEM,
					"service":  map[string]any{"namespace": gardenerNamespace, "name": gardenerService, "port": int64(port)},
				},
			}}
			objs = append(objs, u)
			paths = append(paths, "/apis/"+v.GroupVersion)
		}
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("registering gardener-apiserver in the garden: %w", err)
		}
	}
	// Served through the aggregator once its availability check passed.
	for _, path := range paths {
		if err := waitOK(ctx, g.garden.proc, hc, g.garden.host()+path); err != nil {
			return fmt.Errorf("the garden does not serve gardener-apiserver's %s: %w; gardener-apiserver's last output:\n%s", path, err, g.gardener.Output())
		}
	}
	typed, err := client.New(g.garden.config(), client.Options{Scheme: gardenScheme})
	if err != nil {
		return err
	}
	return createCloudProfile(ctx, typed)
}

func getJSON(ctx context.Context, hc *http.Client, url string, into any) error {
	req, err := newGet(ctx, url)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

// kubeconfigFor renders a kubeconfig for host with client certificate credentials.
func kubeconfigFor(name, host string, caPEM, certPEM, keyPEM []byte) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	return clientcmd.Write(*cfg)
}

// gardenScheme holds the types the garden's fixtures are written with.
var gardenScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(gardencorev1beta1.AddToScheme(s))
	return s
}()
