package file

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"mcr.dev/core/clusters"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
)

// TrustedPolicy is the policy used when Options.Policy is nil: everything a kubeconfig can do is
// allowed, as kubectl allows it. Kubeconfig files on the controller's own file system are written
// by its operator (or mounted by them from a Secret they control), who could run any program in
// the controller anyway; refusing exec plugins or certificate files there would only break the
// kubeconfigs that cloud CLIs generate. Use a stricter kubeconfig.Policy when the files are
// written by someone less trusted than the controller.
func TrustedPolicy() kubeconfig.Policy {
	return kubeconfig.Policy{AllowExec: true, AllowAuthProvider: true, AllowLocalFiles: true, AllowInsecure: true}
}

// errEmptyFile marks a file without content. It is usually being written; it counts as broken, so
// its clusters stay as they were until it has content again or is deleted.
var errEmptyFile = errors.New("file is empty")

// clusterSpec is what one context of a kubeconfig file resolves to.
type clusterSpec struct {
	name    multicluster.ClusterName
	file    string
	context string
	config  *rest.Config
	// referenced is a hash of the content of the files the config points to (certificate
	// authority, client certificate and key), which is part of the credentials too.
	referenced string
	// refDirs are the directories of those files, to be watched.
	refDirs []string
}

// sameCredentials reports whether a and b reach the same endpoint as the same identity, from the
// content of the credentials (never reflect.DeepEqual on rest.Config).
func sameCredentials(a, b *clusterSpec) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.referenced == b.referenced && clusters.EqualConfigs(a.config, b.config)
}

// fileResult is the outcome of reading one kubeconfig file.
type fileResult struct {
	// err is set when the file as a whole could not be used; contexts is then empty.
	err error
	// contexts holds the usable contexts by context name.
	contexts map[string]*clusterSpec
	// contextErrs holds the unusable contexts by context name.
	contextErrs map[string]error
}

// loader turns kubeconfig files into cluster specs.
type loader struct {
	base        string
	separator   string
	policy      kubeconfig.Policy
	restOptions []func(*rest.Config) error
}

// load reads the kubeconfig at path and resolves each of its contexts.
func (l loader) load(path string) fileResult {
	data, err := os.ReadFile(path)
	if err != nil {
		return fileResult{err: fmt.Errorf("reading kubeconfig: %w", err)}
	}
	if len(slices.DeleteFunc(slices.Clone(data), isSpace)) == 0 {
		return fileResult{err: errEmptyFile}
	}
	cfg, err := kubeconfig.Parse(data)
	if err != nil {
		return fileResult{err: err}
	}
	// Relative file references are relative to the kubeconfig's directory, as for kubectl.
	if err := clientcmd.ResolveConfigPaths(cfg, filepath.Dir(path)); err != nil {
		return fileResult{err: fmt.Errorf("resolving file references: %w", err)}
	}

	res := fileResult{contexts: map[string]*clusterSpec{}, contextErrs: map[string]error{}}
	for context := range cfg.Contexts {
		spec := &clusterSpec{
			name:    clusterName(l.base, l.separator, path, context),
			file:    path,
			context: context,
		}
		spec.config, err = kubeconfig.RESTConfig(cfg, context, l.policy)
		if err == nil {
			err = l.applyRESTOptions(spec.config)
		}
		if err == nil {
			spec.referenced, spec.refDirs, err = hashReferencedFiles(spec.config)
		}
		if err != nil {
			res.contextErrs[context] = err
			continue
		}
		res.contexts[context] = spec
	}
	return res
}

func (l loader) applyRESTOptions(cfg *rest.Config) error {
	for _, opt := range l.restOptions {
		if err := opt(cfg); err != nil {
			return fmt.Errorf("applying RESTOptions: %w", err)
		}
	}
	return nil
}

// hashReferencedFiles hashes the certificate files cfg points to. The bearer token file is left
// out on purpose: client-go re-reads it by itself, so a new token needs no new cluster.
func hashReferencedFiles(cfg *rest.Config) (string, []string, error) {
	refs := []struct{ field, path string }{
		{"certificate-authority", cfg.CAFile},
		{"client-certificate", cfg.CertFile},
		{"client-key", cfg.KeyFile},
	}
	h := sha256.New()
	var dirs []string
	found := false
	for _, ref := range refs {
		if ref.path == "" {
			continue
		}
		data, err := os.ReadFile(ref.path)
		if err != nil {
			return "", nil, fmt.Errorf("reading %s: %w", ref.field, err)
		}
		found = true
		sum := sha256.Sum256(data)
		fmt.Fprintf(h, "%s=%x\n", ref.field, sum)
		dirs = append(dirs, filepath.Dir(ref.path))
	}
	if !found {
		return "", nil, nil
	}
	return hex.EncodeToString(h.Sum(nil)), dirs, nil
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
