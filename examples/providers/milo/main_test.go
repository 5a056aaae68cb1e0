// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"mcr.dev/core/envtest"
	"mcr.dev/examples/internal/exampletest"
	"mcr.dev/providers/milo"
	resourcemanagerv1alpha1 "mcr.dev/providers/milo/api/resourcemanager/v1alpha1"
)

var fleet *envtest.Fleet

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m, &fleet, "milo", "alpha", "beta")) }

// The example, in its default Project mode, engages the ready Projects that match the selector,
// one of them provisioned while it runs, under the project's name, and reaches each project's
// control plane through the project path of the Milo apiserver.
func TestMiloProviderExample(t *testing.T) {
	host := miloClient(t)
	alpha := exampletest.Client(t, fleet.Member("alpha").Config())
	beta := exampletest.Client(t, fleet.Member("beta").Config())
	exampletest.SeedMarked(t, alpha, "demo", "hello")
	exampletest.SeedMarked(t, beta, "demo", "hello")
	door := startFrontDoor(t, map[string]string{"alpha": "alpha", "beta": "beta"})
	provision(t, host, "alpha")

	p := exampletest.Start(t, func(ctx context.Context) error {
		return run(ctx, []string{
			"-kubeconfig", door, "-selector", "tier=prod", "-retry-max-delay", "2s",
			"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-zap-log-level", "error",
		})
	})
	p.Eventually(t, "alpha marked", exampletest.MarkedBy(alpha, "demo", "hello", "alpha"))

	provision(t, host, "beta")
	p.Eventually(t, "beta marked", exampletest.MarkedBy(beta, "demo", "hello", "beta"))
	p.Stop(t)
}

// provision does what Milo does for a new project (whose control plane is here the fleet member
// of the same name): it creates the Project and reports it Ready.
func provision(t *testing.T, host client.Client, project string) {
	t.Helper()
	p := &resourcemanagerv1alpha1.Project{
		ObjectMeta: metav1.ObjectMeta{Name: project, Labels: map[string]string{"tier": "prod"}},
		Spec:       resourcemanagerv1alpha1.ProjectSpec{OwnerRef: resourcemanagerv1alpha1.OwnerReference{Kind: "Organization", Name: "acme"}},
	}
	if err := host.Create(t.Context(), p); err != nil {
		t.Fatalf("creating Project %s: %v", project, err)
	}
	meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{
		Type: resourcemanagerv1alpha1.ProjectReady, Status: metav1.ConditionTrue, Reason: "Ready", Message: "set by the test",
	})
	if err := host.Status().Update(t.Context(), p); err != nil {
		t.Fatalf("marking Project %s ready: %v", project, err)
	}
}

// startFrontDoor stands in for the single endpoint of a Milo apiserver, as far as the example
// uses it: every project's control plane under milo.ControlPlanePath(project) is served by the
// fleet member projects names, everything else (Projects, Events, Leases) by the "milo" member.
// Requests are forwarded with the members' admin credentials and streamed (watches). It returns
// the path of a kubeconfig for it. Milo's own authentication and authorization of project
// access are not part of the stand-in: the provider's own code is the same either way.
func startFrontDoor(t *testing.T, projects map[string]string) string {
	t.Helper()
	proxyTo := func(m *envtest.Member) http.Handler {
		target, err := url.Parse(m.Host())
		if err != nil {
			t.Fatal(err)
		}
		transport, err := rest.TransportFor(m.Config())
		if err != nil {
			t.Fatal(err)
		}
		return &httputil.ReverseProxy{
			Rewrite: func(r *httputil.ProxyRequest) {
				r.SetURL(target)
				r.Out.Header.Del("Authorization") // the member's own credentials replace the caller's
			},
			Transport:     transport,
			FlushInterval: -1,
		}
	}
	miloAPI := proxyTo(fleet.Member("milo"))
	controlPlanes := map[string]http.Handler{}
	for project, member := range projects {
		controlPlanes[project] = proxyTo(fleet.Member(member))
	}
	const prefix = "/apis/resourcemanager.miloapis.com/v1alpha1/projects/"
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		project, sub, found := strings.Cut(rest, "/control-plane")
		if !ok || !found || (sub != "" && !strings.HasPrefix(sub, "/")) {
			miloAPI.ServeHTTP(w, r)
			return
		}
		cp, ok := controlPlanes[project]
		if !ok {
			http.Error(w, "no such project", http.StatusNotFound)
			return
		}
		r = r.Clone(r.Context())
		r.URL.Path, r.URL.RawPath = sub, ""
		if r.URL.Path == "" {
			r.URL.Path = "/"
		}
		cp.ServeHTTP(w, r)
	}))
	server.EnableHTTP2 = true
	server.StartTLS()
	t.Cleanup(server.Close)

	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["milo"] = &clientcmdapi.Cluster{Server: server.URL, CertificateAuthorityData: serverCA(t, server)}
	cfg.AuthInfos["milo"] = &clientcmdapi.AuthInfo{Token: "example-operator"}
	cfg.Contexts["milo"] = &clientcmdapi.Context{Cluster: "milo", AuthInfo: "milo"}
	cfg.CurrentContext = "milo"
	path := filepath.Join(t.TempDir(), "milo.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	// The example derives project URLs from the kubeconfig's server: check it is the door.
	if got := milo.ControlPlaneURL(mustParse(t, server.URL), "alpha"); !strings.HasPrefix(got, server.URL+prefix) {
		t.Fatalf("control plane URL %s is not under %s", got, server.URL+prefix)
	}
	return path
}

// serverCA returns the PEM of the test server's certificate, which signs itself.
func serverCA(t *testing.T, s *httptest.Server) []byte {
	t.Helper()
	cert := s.Certificate()
	if cert == nil {
		t.Fatal("the front door has no certificate")
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// miloClient installs the Milo CRDs the provider ships (Projects and ProjectControlPlanes) on
// the "milo" member and returns a client that knows the Milo types.
func miloClient(t *testing.T) client.Client {
	t.Helper()
	scheme, err := milo.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(fleet.Member("milo").Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), "go", "list", "-m", "-f", "{{.Dir}}", "mcr.dev/providers/milo").Output()
	if err != nil {
		t.Fatalf("locating mcr.dev/providers/milo: %v", err)
	}
	for _, file := range []string{"resourcemanager.miloapis.com_projects.yaml", "infrastructure.miloapis.com_projectcontrolplanes.yaml"} {
		path := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			t.Fatal(fmt.Errorf("decoding %s: %w", path, err))
		}
		exampletest.InstallCRD(t, c, crd)
	}
	return c
}
