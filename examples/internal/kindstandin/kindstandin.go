// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package kindstandin lets the smoke tests of the kind examples run without a container
// engine, the way the kind provider's own tests do: it builds the provider's docker stand-in
// (mcr.dev/providers/kind/internal/standin/docker, a main package that the go command builds
// for us although its package is internal) and puts it first on PATH, so the real kind library
// lists "kind clusters" whose kubeconfigs point at real kube-apiservers of an envtest fleet.
//
// The stand-in's state directory holds one JSON file per kind cluster. The provider's tests
// write it with package standin, which examples cannot import; Create writes the same format,
// and a change of that format makes the examples' kind tests fail rather than pass silently.
package kindstandin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	standInPackage = "mcr.dev/providers/kind/internal/standin/docker"
	stateDirEnv    = "MCR_KIND_STANDIN_STATE"
	adminConfPath  = "/etc/kubernetes/admin.conf"
	apiServerPort  = "6443/tcp"
)

// Install builds the docker stand-in into binDir, puts binDir first on PATH and makes stateDir
// the stand-in's state. It changes the process environment: call it from TestMain.
func Install(binDir, stateDir string) error {
	cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, "docker"), standInPackage)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the docker stand-in: %w\n%s", err, out)
	}
	// kind picks the engine by detection, which finds the stand-in as docker.
	return errors.Join(
		os.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH")),
		os.Setenv(stateDirEnv, stateDir),
		os.Unsetenv("KIND_EXPERIMENTAL_PROVIDER"),
	)
}

// The state format of package standin: a cluster is its node containers.
type (
	kindCluster struct {
		Nodes []node `json:"nodes"`
	}
	node struct {
		Name  string                   `json:"name"`
		Role  string                   `json:"role"`
		Files map[string]string        `json:"files,omitempty"`
		Ports map[string][]portBinding `json:"ports,omitempty"`
	}
	portBinding struct {
		HostIp   string //nolint:revive // docker's spelling
		HostPort string
	}
)

// Create does what `kind create cluster --name name` would, in the state directory stateDir,
// for a cluster whose API server is the one kubeconfig's current context talks to, with that
// context's credentials.
func Create(stateDir, name string, kubeconfig []byte) error {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return err
	}
	kctx := cfg.Contexts[cfg.CurrentContext]
	if kctx == nil || cfg.Clusters[kctx.Cluster] == nil || cfg.AuthInfos[kctx.AuthInfo] == nil {
		return errors.New("kubeconfig's current context lacks a cluster or user")
	}
	u, err := url.Parse(cfg.Clusters[kctx.Cluster].Server)
	if err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return err
	}
	// kubeadm's admin.conf on the node points at the node's own address; kind rewrites it to
	// the port published on the host when it reads it.
	admin := clientcmdapi.NewConfig()
	server := cfg.Clusters[kctx.Cluster].DeepCopy()
	server.Server = "https://" + name + "-control-plane:6443"
	admin.Clusters[name] = server
	admin.AuthInfos["kubernetes-admin"] = cfg.AuthInfos[kctx.AuthInfo]
	admin.Contexts["kubernetes-admin@"+name] = &clientcmdapi.Context{Cluster: name, AuthInfo: "kubernetes-admin"}
	admin.CurrentContext = "kubernetes-admin@" + name
	adminConf, err := clientcmd.Write(*admin)
	if err != nil {
		return err
	}
	data, err := json.Marshal(kindCluster{Nodes: []node{{
		Name:  name + "-control-plane",
		Role:  "control-plane",
		Files: map[string]string{adminConfPath: string(adminConf)},
		Ports: map[string][]portBinding{apiServerPort: {{HostIp: host, HostPort: port}}},
	}}})
	if err != nil {
		return err
	}
	tmp := filepath.Join(stateDir, "."+name+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(stateDir, name+".cluster.json"))
}
