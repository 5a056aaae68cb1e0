// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package kindtest lets tests run the kind provider, and the real kind library under it, against
// stand-in kind clusters: the docker stand-in of package standin on PATH, reporting node
// containers whose kubeconfigs point at real kube-apiservers (envtest members).
package kindtest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"mcr.dev/providers/kind/internal/standin"
)

// standInPackage is the import path of the docker stand-in command.
const standInPackage = "mcr.dev/providers/kind/internal/standin/docker"

// Install builds the docker stand-in into binDir and puts binDir first on PATH, so that every
// `docker` the process runs from now on is the stand-in, serving the state directory stateDir.
// It changes the process environment: call it from TestMain, or use t.Setenv-style restoration
// around it.
func Install(binDir, stateDir string) error {
	if err := BuildStandIn(binDir); err != nil {
		return err
	}
	if err := os.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH")); err != nil {
		return err
	}
	return os.Setenv(standin.StateDirEnv, stateDir)
}

// BuildStandIn builds the docker stand-in as binDir/docker.
func BuildStandIn(binDir string) error {
	cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, "docker"), standInPackage)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the docker stand-in: %w\n%s", err, out)
	}
	return nil
}

// Clusters creates, recreates and deletes stand-in kind clusters in a state directory.
type Clusters struct {
	State standin.State
}

// Create does what `kind create cluster --name name` would, for a cluster whose API server is
// the one kubeconfig's current context talks to, with that context's credentials. Creating an
// existing name replaces the cluster (a delete and create under the same name).
func (c Clusters) Create(name string, kubeconfig []byte) error {
	adminConf, host, port, err := AdminConf(name, kubeconfig)
	if err != nil {
		return err
	}
	return c.State.Put(name, standin.KindCluster(name, adminConf, host, port))
}

// Update changes a cluster in place.
func (c Clusters) Update(name string, change func(*standin.Cluster)) error {
	cl, err := c.State.Get(name)
	if err != nil {
		return fmt.Errorf("stand-in kind cluster %q: %w", name, err)
	}
	change(&cl)
	return c.State.Put(name, cl)
}

// Delete does what `kind delete cluster --name name` would.
func (c Clusters) Delete(name string) error {
	return c.State.Delete(name)
}

// AdminConf turns a kubeconfig into the admin.conf kubeadm writes on a kind control-plane node
// of cluster name (entries named as kubeadm names them, the server being the node's address
// inside the kind network), and returns the host and port the node's API server port must be
// published on for kind's host kubeconfig to reach the original server.
func AdminConf(name string, kubeconfig []byte) (adminConf []byte, hostIP, hostPort string, err error) {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, "", "", err
	}
	kctx := cfg.Contexts[cfg.CurrentContext]
	if kctx == nil {
		return nil, "", "", errors.New("kubeconfig has no current context")
	}
	cluster, user := cfg.Clusters[kctx.Cluster], cfg.AuthInfos[kctx.AuthInfo]
	if cluster == nil || user == nil {
		return nil, "", "", errors.New("kubeconfig's current context lacks a cluster or user")
	}
	u, err := url.Parse(cluster.Server)
	if err != nil {
		return nil, "", "", err
	}
	hostIP, hostPort, err = net.SplitHostPort(u.Host)
	if err != nil {
		return nil, "", "", err
	}
	out := clientcmdapi.NewConfig()
	server := cluster.DeepCopy()
	server.Server = "https://" + name + "-control-plane:6443"
	out.Clusters[name] = server
	out.AuthInfos["kubernetes-admin"] = user
	ctxName := "kubernetes-admin@" + name
	out.Contexts[ctxName] = &clientcmdapi.Context{Cluster: name, AuthInfo: "kubernetes-admin"}
	out.CurrentContext = ctxName
	adminConf, err = clientcmd.Write(*out)
	return adminConf, hostIP, hostPort, err
}
