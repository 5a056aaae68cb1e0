// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"mcr.dev/conformance"
	"mcr.dev/conformance/mcrproviders"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/file"
)

// TestConformance runs the mcr conformance suite against the provider with its default options:
// every member is a kubeconfig file <member>.kubeconfig, with one context named after the member,
// in a directory the provider watches. Its credentials are a ServiceAccount token of its own,
// which the suite rotates (the file is rewritten) and revokes.
func TestConformance(t *testing.T) { runConformance(t, false) }

// TestConformanceInPlace runs the suite's rotation tests with kit.Options.RefreshCredentialsInPlace
// on (the default; TestConformance turns it off to cover a new engagement per rotation),
// claiming InPlaceCredentialRefresh: a rewritten file with a new token keeps the engagement.
func TestConformanceInPlace(t *testing.T) { runConformance(t, true) }

func runConformance(t *testing.T, inPlace bool) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name+".kubeconfig") }

	// The provider's log lines, which must never quote a member's credentials; it records no
	// Events (no host cluster).
	providerLogs := &providertest.LogBuffer{}
	// Every file is read again this often: short, for NoReengageOnResync.
	const resync = 2 * time.Second

	harness := &conformance.KubeconfigHarness{
		Fleet: conformance.NewFleet(fleet.Member("east"), fleet.Member("west"), fleet.Member("north")),
		Provider: func(context.Context) (multicluster.Provider, error) {
			return file.New(file.Options{Dirs: []string{dir}, Options: kit.Options{Logger: providerLogs.Logger(), ResyncPeriod: resync, RefreshCredentialsInPlace: ptr.To(inPlace)}})
		},
		Write: func(_ context.Context, name string, kubeconfig []byte) error {
			data, err := withContextName(kubeconfig, name)
			if err != nil {
				return err
			}
			return replaceFile(path(name), data)
		},
		Delete: func(_ context.Context, name string) error {
			if err := os.Remove(path(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			return nil
		},
		ProviderReports: func(context.Context) ([]string, error) { return providerLogs.Lines(), nil },
		// A change of the file that is not a change of the member: a comment.
		Update: func(_ context.Context, name string) error {
			data, err := os.ReadFile(path(name))
			if err != nil {
				return err
			}
			return replaceFile(path(name), append([]byte(fmt.Sprintf("# touched at %s\n", time.Now().Format(time.RFC3339Nano))), data...))
		},
		ClusterName: func(name string) multicluster.ClusterName {
			return multicluster.ClusterName(name + ".kubeconfig+" + name)
		},
		Resync: resync,
	}

	// Not MemberReadiness: a kubeconfig file carries no readiness. Not SourceRestart: the source
	// of truth is the local filesystem, which has no outage to survive.
	o := mcrproviders.Options("file", conformance.MemberReadiness, conformance.SourceRestart)
	if inPlace {
		mcrproviders.RunInPlace(t, harness, o)
		return
	}
	conformance.Run(t, harness, o)
}

// withContextName renames the current context of a kubeconfig, and its cluster and user, to name.
func withContextName(data []byte, name string) ([]byte, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, err
	}
	current := cfg.Contexts[cfg.CurrentContext]
	if current == nil {
		return nil, fmt.Errorf("kubeconfig has no current context")
	}
	out := clientcmdapi.NewConfig()
	out.Clusters[name] = cfg.Clusters[current.Cluster]
	out.AuthInfos[name] = cfg.AuthInfos[current.AuthInfo]
	out.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	out.CurrentContext = name
	return clientcmd.Write(*out)
}

// replaceFile writes data to a temporary file and renames it over path.
func replaceFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
