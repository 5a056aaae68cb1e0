// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"fmt"
	"maps"
	"slices"
)

// DefaultAPIServerFlags returns the kube-apiserver flags every member gets unless
// Options.APIServerFlags overrides them. They keep a real, secure apiserver (TLS, client
// certificate authentication, RBAC, signed service-account tokens) and switch off what tests
// do not need and what makes a start slower or a process bigger:
//
//	authorization-mode=RBAC               real authorization, so limited credentials are limited
//	service-account-issuer=https://kubernetes.default.svc.cluster.local
//	service-cluster-ip-range=10.0.0.0/24
//	advertise-address=127.0.0.1
//	allow-privileged=true                 pods of any kind can be stored
//	endpoint-reconciler-type=none         no master lease loop; members never share a prefix
//	enable-priority-and-fairness=false    no flow-control bootstrap objects or queues
//	profiling=false
//
// Each call returns a new map.
func DefaultAPIServerFlags() map[string]string {
	return map[string]string{
		"authorization-mode":           "RBAC",
		"service-account-issuer":       "https://kubernetes.default.svc.cluster.local",
		"service-cluster-ip-range":     "10.0.0.0/24",
		"advertise-address":            "127.0.0.1",
		"allow-privileged":             "true",
		"endpoint-reconciler-type":     "none",
		"enable-priority-and-fairness": "false",
		"profiling":                    "false",
	}
}

// DefaultEtcdFlags returns the etcd flags the fleet uses unless Options.EtcdFlags overrides
// them. Test data need not survive a power cut, so fsync is off (much faster writes on slow
// disks), and logging is limited to warnings.
//
//	unsafe-no-fsync=true
//	log-level=warn
//	quota-backend-bytes=4294967296        4 GiB, room for long benchmarks
//
// Each call returns a new map.
func DefaultEtcdFlags() map[string]string {
	return map[string]string{
		"unsafe-no-fsync":     "true",
		"log-level":           "warn",
		"quota-backend-bytes": "4294967296",
	}
}

// Flags whose values the fleet computes per process; overriding them would break the fleet.
var (
	managedAPIServerFlags = []string{
		"bind-address", "secure-port", "cert-dir", "tls-cert-file", "tls-private-key-file",
		"client-ca-file", "etcd-servers", "etcd-prefix", "service-account-key-file",
		"service-account-signing-key-file",
	}
	managedEtcdFlags = []string{
		"name", "data-dir", "listen-client-urls", "advertise-client-urls", "listen-peer-urls",
		"initial-advertise-peer-urls", "initial-cluster",
	}
)

// mergeFlags applies overrides to defaults and renders them as sorted --key=value arguments.
func mergeFlags(defaults, overrides map[string]string, managed []string) ([]string, error) {
	merged := maps.Clone(defaults)
	for k, v := range overrides {
		if slices.Contains(managed, k) {
			return nil, fmt.Errorf("envtest: flag --%s is managed by the fleet and cannot be set", k)
		}
		if k == "" || k[0] == '-' {
			return nil, fmt.Errorf("envtest: flag name %q: give names without leading dashes", k)
		}
		merged[k] = v
	}
	return flagList(merged), nil
}

func flagList(flags map[string]string) []string {
	args := make([]string, 0, len(flags))
	for _, k := range slices.Sorted(maps.Keys(flags)) {
		args = append(args, "--"+k+"="+flags[k])
	}
	return args
}
