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

// AssetsEnv names the environment variable that points at a directory holding the
// kube-apiserver and etcd binaries; it takes precedence over the repository's bin directory.
const AssetsEnv = "MCR_ENVTEST_ASSETS"

// ErrBinariesNotFound is returned (wrapped) by Start when kube-apiserver or etcd is missing.
// Its message says how to build them.
var ErrBinariesNotFound = errors.New("binaries not found")

const (
	apiserverBinary = "kube-apiserver"
	etcdBinary      = "etcd"
)

// defaultBinaryDir finds the binaries: $MCR_ENVTEST_ASSETS if set, otherwise
// bin/envtest/<KubernetesVersion> in the nearest directory above the working directory that
// holds go.work (the repository root, where `make envtest` puts them).
func defaultBinaryDir() (string, error) {
	if dir := os.Getenv(AssetsEnv); dir != "" {
		return dir, nil
	}
	root, err := repositoryRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin", "envtest", KubernetesVersion), nil
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
			return "", fmt.Errorf("%w: no go.work above %s, so the repository's bin/envtest/%s cannot be found; "+
				"run the tests inside the mcr repository or set %s to a directory holding kube-apiserver and etcd",
				ErrBinariesNotFound, wd, KubernetesVersion, AssetsEnv)
		}
	}
}

// checkBinaries returns the paths of kube-apiserver and etcd in dir, or an error that names
// the command that builds them.
func checkBinaries(dir string) (apiserver, etcd string, err error) {
	apiserver = filepath.Join(dir, apiserverBinary)
	etcd = filepath.Join(dir, etcdBinary)
	var missing []string
	for _, p := range []string{apiserver, etcd} {
		if st, statErr := os.Stat(p); statErr != nil || st.IsDir() || st.Mode().Perm()&0o111 == 0 {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return apiserver, etcd, nil
	}
	hint := `run "make envtest" in the repository root to build them (about 10 minutes the first time, seconds afterwards)`
	if root, rootErr := repositoryRoot(); rootErr == nil {
		hint = fmt.Sprintf(`run "make envtest" in the repository root (%s) to build them (about 10 minutes the first time, seconds afterwards)`, root)
	}
	return "", "", fmt.Errorf("%w: missing %s (Kubernetes %s): %s, or set %s to a directory holding kube-apiserver and etcd",
		ErrBinariesNotFound, strings.Join(missing, ", "), KubernetesVersion, hint, AssetsEnv)
}
