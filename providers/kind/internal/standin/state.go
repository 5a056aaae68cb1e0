// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package standin is a stand-in for the docker command line, for testing the kind provider on
// machines without a container engine. It answers the docker calls that the real
// sigs.k8s.io/kind library makes to list kind clusters and read their kubeconfigs, from a state
// directory that a test controls: one JSON file per kind cluster, describing its node
// containers. The command itself is ./docker; tests build it and put it first on PATH.
//
// Served calls (everything else fails, and is appended to unsupported.log in the state
// directory so that tests notice when kind starts making calls the stand-in does not know):
//
//	docker -v | --version
//	docker info [--format|-f TEMPLATE]
//	docker ps [-a] [-q] [--filter label=KEY[=VALUE]]... [--format TEMPLATE]
//	docker inspect [--format|-f TEMPLATE] CONTAINER...
//	docker port CONTAINER [PORT/PROTO]
//	docker exec [--privileged] [-i] [-t] [-e ENV]... CONTAINER cat FILE
//
// Templates are evaluated with text/template over values shaped like docker's own, so the
// formats kind passes work as they do against docker.
package standin

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// StateDirEnv names the environment variable that holds the state directory.
const StateDirEnv = "MCR_KIND_STANDIN_STATE"

// Labels and roles kind puts on its node containers.
const (
	ClusterLabel = "io.x-k8s.kind.cluster"
	RoleLabel    = "io.x-k8s.kind.role"

	RoleControlPlane = "control-plane"
	RoleWorker       = "worker"
	RoleLoadBalancer = "external-load-balancer"

	// AdminConfPath is where kubeadm writes the admin kubeconfig on a control-plane node.
	AdminConfPath = "/etc/kubernetes/admin.conf"

	// APIServerPort is the container port of the API server, published on the host.
	APIServerPort = "6443/tcp"
)

// Cluster is one kind cluster: its node containers.
type Cluster struct {
	Nodes []Node `json:"nodes"`
}

// Node is one node container of a kind cluster.
type Node struct {
	// Name is the container name, e.g. fleet-a-control-plane.
	Name string `json:"name"`
	// ID is the container ID. Defaults to a value derived from Name.
	ID string `json:"id,omitempty"`
	// Role is the value of the io.x-k8s.kind.role label.
	Role string `json:"role"`
	// Stopped makes the container exist but not run: exec fails as it does in docker.
	Stopped bool `json:"stopped,omitempty"`
	// Labels are extra container labels (kind's are added from the cluster name and Role).
	Labels map[string]string `json:"labels,omitempty"`
	// Files are the files `docker exec ... cat` can read, by absolute path.
	Files map[string]string `json:"files,omitempty"`
	// Ports are host bindings by container port ("6443/tcp").
	Ports map[string][]PortBinding `json:"ports,omitempty"`
	// ExecFails makes every exec into the container fail with this message.
	ExecFails string `json:"execFails,omitempty"`
	// ExecHangs makes every exec into the container block until the file of that name in the
	// state directory is removed (or a minute has passed): a wedged container.
	ExecHangs string `json:"execHangs,omitempty"`
}

// PortBinding is a host binding of a container port, as in docker inspect.
type PortBinding struct {
	HostIp   string //nolint:revive // docker's spelling
	HostPort string
}

// State is a state directory.
type State struct {
	Dir string
}

// clusterFile is the file of a cluster; names are kind cluster names, which are DNS labels.
func (s State) clusterFile(name string) string {
	return filepath.Join(s.Dir, name+".cluster.json")
}

// Put creates or replaces a cluster, atomically: a concurrent docker call sees the old or the
// new cluster, never a mix.
func (s State) Put(name string, c Cluster) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(s.clusterFile(name), data)
}

// Delete removes a cluster. Deleting an unknown cluster does nothing.
func (s State) Delete(name string) error {
	if err := os.Remove(s.clusterFile(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Get returns a cluster.
func (s State) Get(name string) (Cluster, error) {
	var c Cluster
	data, err := os.ReadFile(s.clusterFile(name))
	if err != nil {
		return c, err
	}
	return c, json.Unmarshal(data, &c)
}

// Clusters returns every cluster by name.
func (s State) Clusters() (map[string]Cluster, error) {
	matches, err := filepath.Glob(filepath.Join(s.Dir, "*.cluster.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]Cluster{}
	for _, m := range matches {
		name := strings.TrimSuffix(filepath.Base(m), ".cluster.json")
		c, err := s.Get(name)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("cluster %q: %w", name, err)
		}
		out[name] = c
	}
	return out, nil
}

// Unsupported returns the calls the stand-in did not know, one per line.
func (s State) Unsupported() ([]string, error) {
	data, err := os.ReadFile(filepath.Join(s.Dir, "unsupported.log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(strings.Split(string(data), "\n"), func(l string) bool { return l == "" }), nil
}

func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// KindCluster returns the cluster `kind create cluster --name name` makes with one control-plane
// node: its admin.conf is adminConf (a kubeadm kubeconfig, whose server is the node's own
// address), and its API server is published on hostIP:hostPort.
func KindCluster(name string, adminConf []byte, hostIP, hostPort string) Cluster {
	return Cluster{Nodes: []Node{{
		Name:  name + "-control-plane",
		Role:  RoleControlPlane,
		Files: map[string]string{AdminConfPath: string(adminConf)},
		Ports: map[string][]PortBinding{APIServerPort: {{HostIp: hostIP, HostPort: hostPort}}},
	}}}
}
