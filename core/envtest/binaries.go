// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KubernetesVersion is the version of the kube-apiserver that `make envtest` builds and that
// the fleet runs. It must match k8s.io/kubernetes in hack/tools/kube-apiserver/go.mod
// (`make verify` checks this).
const KubernetesVersion = "v1.37.2"

// AssetsEnv names mcr's own environment variable for a directory holding the kube-apiserver
// and etcd binaries. It is consulted before KubebuilderAssetsEnv: a variable only mcr reads
// is a deliberate choice for this repository, while KUBEBUILDER_ASSETS is often set once for
// every controller-runtime project on a machine or CI runner.
const AssetsEnv = "MCR_ENVTEST_ASSETS"

// KubebuilderAssetsEnv names controller-runtime's environment variable for the directory that
// holds kube-apiserver, etcd and kubectl directly, as `setup-envtest use -p path` prints it.
// It is consulted after AssetsEnv and before the repository's bin/envtest.
const KubebuilderAssetsEnv = "KUBEBUILDER_ASSETS"

// ErrBinariesNotFound is returned (wrapped) by Start when kube-apiserver or etcd is missing.
// Its message names every place looked at and how to fill one.
var ErrBinariesNotFound = errors.New("binaries not found")

const (
	// setupEnvtestVersion is the branch of controller-runtime's setup-envtest that matches the
	// controller-runtime core requires (kubebuilder's convention: release-<major>.<minor>).
	setupEnvtestVersion = "release-0.25"

	apiserverBinary = "kube-apiserver"
	etcdBinary      = "etcd"
)

// binaryDir is a directory that may hold the binaries and why it was chosen.
type binaryDir struct {
	path   string
	origin string // "Options.BinaryDir", "$KUBEBUILDER_ASSETS", ...
}

// lookupOrder lists, in the order they are consulted, the places Start may take the binaries
// from when Options.BinaryDir is empty. The first one that is set wins; a set place that lacks
// the binaries is an error rather than a reason to fall through, so that a mistyped path is
// reported instead of silently running other binaries. The repository's directory is empty
// when no go.work is found above the working directory; rootErr then says why.
func lookupOrder() (dirs []binaryDir, rootErr error) {
	for _, env := range []string{AssetsEnv, KubebuilderAssetsEnv} {
		dirs = append(dirs, binaryDir{path: os.Getenv(env), origin: "$" + env})
	}
	repo := binaryDir{origin: "the repository's bin/envtest"}
	root, rootErr := repositoryRoot()
	if rootErr == nil {
		repo.path = filepath.Join(root, "bin", "envtest", KubernetesVersion)
	}
	return append(dirs, repo), rootErr
}

// defaultBinaryDir picks the first place of lookupOrder that is set.
func defaultBinaryDir() (binaryDir, error) {
	dirs, rootErr := lookupOrder()
	for _, d := range dirs {
		if d.path != "" {
			return d, nil
		}
	}
	return binaryDir{}, fmt.Errorf("%w: %s and %s are unset and %w; %s", ErrBinariesNotFound,
		AssetsEnv, KubebuilderAssetsEnv, rootErr, fillHint())
}

func repositoryRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no go.work above %s, so the repository's bin/envtest/%s cannot be found", wd, KubernetesVersion)
		}
	}
}

// checkBinaries returns the paths of kube-apiserver and etcd in dir, or an error that names
// what is missing, every place looked up and how to fill one.
func checkBinaries(dir binaryDir) (apiserver, etcd string, err error) {
	apiserver = filepath.Join(dir.path, apiserverBinary)
	etcd = filepath.Join(dir.path, etcdBinary)
	var missing []string
	for _, p := range []string{apiserver, etcd} {
		if st, statErr := os.Stat(p); statErr != nil || st.IsDir() || st.Mode().Perm()&0o111 == 0 {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return apiserver, etcd, nil
	}
	return "", "", fmt.Errorf("%w: missing %s (Kubernetes %s) in %s, taken from %s; %s; %s",
		ErrBinariesNotFound, strings.Join(missing, ", "), KubernetesVersion, dir.path, dir.origin,
		describeLookup(), fillHint())
}

// describeLookup names each place in lookup order with its current value, so that an error
// shows which variable was set when the user expected another one to be used.
func describeLookup() string {
	dirs, rootErr := lookupOrder()
	parts := make([]string, 0, len(dirs))
	for _, d := range dirs {
		switch {
		case d.path != "":
			parts = append(parts, fmt.Sprintf("%s (%s)", d.origin, d.path))
		case rootErr != nil && !strings.HasPrefix(d.origin, "$"):
			parts = append(parts, fmt.Sprintf("%s (%v)", d.origin, rootErr))
		default:
			parts = append(parts, d.origin+" (unset)")
		}
	}
	return "looked up in order (the first set wins, after Options.BinaryDir): " + strings.Join(parts, ", ")
}

// fillHint says how to put the binaries in one of the places looked up: downloaded by
// controller-runtime's setup-envtest where the network allows, built from source otherwise.
func fillHint() string {
	minor := strings.TrimPrefix(KubernetesVersion, "v")
	if i := strings.LastIndex(minor, "."); i > 0 {
		minor = minor[:i] + ".x"
	}
	build := `run "make envtest" in the mcr repository root to build them from source (about 10 minutes the first time, seconds afterwards)`
	if root, err := repositoryRoot(); err == nil {
		build = fmt.Sprintf(`run "make envtest" in the repository root (%s) to build them from source (about 10 minutes the first time, seconds afterwards)`, root)
	}
	return fmt.Sprintf(`download them with "export %s=$(go run sigs.k8s.io/controller-runtime/tools/setup-envtest@%s use %s -p path)", or %s`,
		KubebuilderAssetsEnv, setupEnvtestVersion, minor, build)
}
