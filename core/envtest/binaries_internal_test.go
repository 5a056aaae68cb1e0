// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
)

// realBinaryDir is where the binaries of this test run come from, decided before a test changes
// the environment.
func realBinaryDir(t *testing.T) string {
	t.Helper()
	dir, err := defaultBinaryDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := checkBinaries(dir); err != nil {
		t.Fatal(err)
	}
	return dir.path
}

// setupEnvtestLayout returns a directory laid out as `setup-envtest use -p path` leaves one:
// kube-apiserver, etcd and kubectl side by side, here links to the real binaries (kubectl, which
// the fleet does not run, to etcd).
func setupEnvtestLayout(t *testing.T, binaries string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "k8s", strings.TrimPrefix(KubernetesVersion, "v")+"-linux-amd64")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{apiserverBinary: apiserverBinary, etcdBinary: etcdBinary, "kubectl": etcdBinary} {
		if err := os.Symlink(filepath.Join(binaries, target), filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A fleet starts from the directory KUBEBUILDER_ASSETS names, as controller-runtime's envtest
// would, with nothing else set.
func TestKubebuilderAssets(t *testing.T) {
	dir := setupEnvtestLayout(t, realBinaryDir(t))
	t.Setenv(AssetsEnv, "")
	t.Setenv(KubebuilderAssetsEnv, dir)

	fleet, err := Start(t.Context(), Options{Members: []string{"kb"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fleet.Stop(); err != nil {
			t.Error(err)
		}
	})
	if got := fleet.opts.BinaryDir; got != dir {
		t.Errorf("BinaryDir = %q, want %q from %s", got, dir, KubebuilderAssetsEnv)
	}
	v, err := kubernetes.NewForConfigOrDie(fleet.Member("kb").Config()).Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != KubernetesVersion {
		t.Errorf("server version %s, want %s", v.GitVersion, KubernetesVersion)
	}
}

// The first place set wins, in the order Options.BinaryDir, MCR_ENVTEST_ASSETS,
// KUBEBUILDER_ASSETS, the repository's bin/envtest; a place that is set but lacks the binaries
// is an error naming it, not a reason to try the next.
func TestBinaryLookupOrder(t *testing.T) {
	mcr, kb, explicit := t.TempDir(), t.TempDir(), t.TempDir()
	root, err := repositoryRoot()
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(root, "bin", "envtest", KubernetesVersion)

	for _, tc := range []struct {
		name          string
		mcr, kb, opts string
		want, origin  string
	}{
		{name: "options first", mcr: mcr, kb: kb, opts: explicit, want: explicit, origin: "Options.BinaryDir"},
		{name: "mcr before kubebuilder", mcr: mcr, kb: kb, want: mcr, origin: "$" + AssetsEnv},
		{name: "kubebuilder before repository", kb: kb, want: kb, origin: "$" + KubebuilderAssetsEnv},
		{name: "repository last", want: repo, origin: "bin/envtest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(AssetsEnv, tc.mcr)
			t.Setenv(KubebuilderAssetsEnv, tc.kb)
			opts := Options{BinaryDir: tc.opts}
			if err := opts.setDefaults(); err != nil {
				t.Fatal(err)
			}
			if opts.BinaryDir != tc.want || !strings.Contains(opts.binaries.origin, tc.origin) {
				t.Fatalf("binaries from %q (%s), want %q (%s)", opts.BinaryDir, opts.binaries.origin, tc.want, tc.origin)
			}
			if tc.want == repo {
				return // the repository's binaries may well be there
			}
			_, err := Start(t.Context(), opts)
			if !errors.Is(err, ErrBinariesNotFound) {
				t.Fatalf("Start with empty %s: err = %v, want ErrBinariesNotFound", tc.want, err)
			}
			for _, part := range []string{
				filepath.Join(tc.want, apiserverBinary), tc.origin,
				// every place, in order, and how to fill one
				"$" + AssetsEnv, "$" + KubebuilderAssetsEnv, repo,
				"setup-envtest@" + setupEnvtestVersion, "make envtest",
			} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error does not mention %q:\n%v", part, err)
				}
			}
		})
	}
}

// Outside the repository with neither variable set, the error says that nothing was found and
// how to get binaries.
func TestNoPlaceToLook(t *testing.T) {
	t.Setenv(AssetsEnv, "")
	t.Setenv(KubebuilderAssetsEnv, "")
	t.Chdir(t.TempDir())
	_, err := Start(t.Context(), Options{})
	if !errors.Is(err, ErrBinariesNotFound) {
		t.Fatalf("err = %v, want ErrBinariesNotFound", err)
	}
	for _, part := range []string{AssetsEnv, KubebuilderAssetsEnv, "no go.work above", "setup-envtest@" + setupEnvtestVersion, "make envtest"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error does not mention %q:\n%v", part, err)
		}
	}
}

// setup-envtest's branch follows the controller-runtime that core requires (core/go.mod), as
// kubebuilder's Makefile derives it.
func TestSetupEnvtestVersionMatchesControllerRuntime(t *testing.T) {
	gomod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(gomod), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "sigs.k8s.io/controller-runtime" {
			continue
		}
		parts := strings.SplitN(strings.TrimPrefix(fields[1], "v"), ".", 3)
		if want := "release-" + parts[0] + "." + parts[1]; setupEnvtestVersion != want {
			t.Fatalf("setupEnvtestVersion = %q, want %q for controller-runtime %s", setupEnvtestVersion, want, fields[1])
		}
		return
	}
	t.Fatal("core/go.mod does not require sigs.k8s.io/controller-runtime")
}
