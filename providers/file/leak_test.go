// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/file"
)

// TestNeverReportsCredentials plants a marker secret in every credential field of a kubeconfig
// and writes the kubeconfigs into files the provider reads: files named in Files (Policy) and
// files it discovers through Dirs and Globs (DiscoveredPolicy). It drives them through failure,
// rotation of a working file and removal, under the default policies and with TrustedPolicy
// for both (so that exec and auth-provider plugins and proxies run, and their errors are
// reported too). The working tokens of the rotation must not leak either. Every log line of the
// providers and of controller-runtime and client-go, every error the provider returned
// (ReadConfigs, Get) and the metrics are scanned. The provider records no Events.
func TestNeverReportsCredentials(t *testing.T) {
	providertest.RunKubeconfigLeakTest(t, providertest.KubeconfigLeakTest{
		Admin:    fleet.Member("east").Config(),
		Policies: map[string]kubeconfig.Policy{"default": {}, "trusted": file.TrustedPolicy()},
		Drive:    driveMarkedFiles,
	})
}

// driveMarkedFiles runs a provider with policy for both configured and discovered files and
// drives the files through failure with each marked kubeconfig, rotation and removal; it scans
// what the provider logged and returned into check.
func driveMarkedFiles(t *testing.T, check *providertest.LeakCheck, marked []providertest.MarkedKubeconfig, policy kubeconfig.Policy) {
	dir := t.TempDir()
	explicit := func(name string) string { return filepath.Join(dir, "explicit", name) }
	rotating := explicit("rotating.yaml")
	files := []string{rotating}
	for i := range marked {
		files = append(files, explicit(fmt.Sprintf("marked-%d.yaml", i)))
	}
	logs := &logBuffer{}
	opts := file.Options{Files: files, Dirs: []string{filepath.Join(dir, "dir")}, Globs: []string{filepath.Join(dir, "glob", "*.yaml")}}
	opts.Policy, opts.DiscoveredPolicy = policy, policy
	opts.Logger = logs.Logger()
	s := start(t, opts)
	defer check.ScanLogs(logs)

	name := func(path string) multicluster.ClusterName {
		n, err := s.provider.ClusterName(path, "member")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// problems counts the lines that report a problem of the cluster, or its resolution.
	problems := func(n multicluster.ClusterName) int {
		count := 0
		for _, l := range logs.All(`"cluster"="` + string(n) + `"`) {
			if strings.Contains(l, "Cannot use kubeconfig context") || strings.Contains(l, "cannot be engaged") {
				count++
			}
		}
		return count
	}
	resolutions := func(n multicluster.ClusterName) int {
		return len(logs.All(`"cluster"="`+string(n)+`"`, "problem resolved"))
	}

	// A working file, rotated to another token.
	first := serviceAccountConfig(t, "west", "member")
	second := serviceAccountConfig(t, "west", "member")
	for _, cfg := range []*clientcmdapi.Config{first, second} {
		check.Add(cfg.AuthInfos["member"].Token)
	}
	writeAtomic(t, rotating, write(t, first))
	working := name(rotating)
	s.waitEngaged(t, working)
	old := s.snapshot(t, working)[working]
	writeAtomic(t, rotating, write(t, second))
	// Another token of the same ServiceAccount: the engaged cluster takes it in place.
	s.rec.WaitRefreshedInPlace(t, logs, working, old, 1, time.Minute)
	current := s.snapshot(t, working)

	for i, v := range marked {
		// The marked kubeconfig as a named file, in the directory and matching the glob: each is
		// refused with a reported problem and never engaged.
		paths := []string{
			explicit(fmt.Sprintf("marked-%d.yaml", i)),
			filepath.Join(dir, "dir", fmt.Sprintf("marked-%d.kubeconfig", i)),
			filepath.Join(dir, "glob", fmt.Sprintf("marked-%d.yaml", i)),
		}
		for _, path := range paths {
			writeAtomic(t, path, v.Kubeconfig)
			n := name(path)
			eventually(t, fmt.Sprintf("problem of %s (marked %s) reported", path, v.Field), func() error {
				if problems(n) == 0 {
					return errors.New("not reported")
				}
				return nil
			})
			if c := s.rec.Count(n); c != 0 {
				t.Errorf("%s: a kubeconfig with a marked %s was engaged", path, v.Field)
			}
			// Under the default policies, with the reason the kit would give: the policy's
			// refusals are the provider's own context errors, the member's the kit's.
			if policy == (kubeconfig.Policy{}) {
				want := []string{"Cannot use kubeconfig context"}
				if v.Reason != kit.ReasonInvalidKubeconfig {
					want = []string{"cannot be engaged", `"reason"="` + v.Reason + `"`}
				}
				if _, err := logs.Find(append(want, `"cluster"="`+string(n)+`"`)...); err != nil {
					t.Errorf("%s (marked %s): %v", path, v.Field, err)
				}
			}
			_, err := s.provider.Get(t.Context(), n)
			if !errors.Is(err, multicluster.ErrClusterNotFound) {
				t.Errorf("Get(%s) = %v, want ErrClusterNotFound", n, err)
			}
			check.ScanError("Get error", err)
		}

		// Rotating the working file to it fails too and keeps the working instance; rotating
		// back resolves the problem, so that the next marked kubeconfig is reported anew.
		before, resolved := problems(working), resolutions(working)
		writeAtomic(t, rotating, v.Kubeconfig)
		eventually(t, fmt.Sprintf("rotation to a marked %s reported", v.Field), func() error {
			if problems(working) == before {
				return errors.New("no new problem logged")
			}
			return nil
		})
		writeAtomic(t, rotating, write(t, second))
		eventually(t, fmt.Sprintf("rotation back from a marked %s resolved", v.Field), func() error {
			if resolutions(working) == resolved {
				return errors.New("no resolution logged")
			}
			return nil
		})
		s.requireUntouched(t, current)
	}

	configs, err := s.provider.ReadConfigs()
	// Tokens, passwords and keys the member refuses pass the policy; the rest are errors.
	if _, ok := configs[working]; !ok || err == nil {
		t.Errorf("ReadConfigs = %d configs (the working one: %t), %v; want it and errors", len(configs), ok, err)
	}
	check.ScanError("ReadConfigs error", err)

	// Every file goes.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	s.waitEngaged(t)
	_, err = s.provider.Get(t.Context(), working)
	check.ScanError("Get error", err)
}

// write serializes cfg.
func write(t *testing.T, cfg *clientcmdapi.Config) []byte {
	t.Helper()
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
