package file

import (
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

// TrustedPolicy allows everything a kubeconfig can do, as kubectl allows it: exec and
// auth-provider plugins, references to local files, insecure-skip-tls-verify. Set it as
// Options.Policy for kubeconfig files only the operator writes (or mounts from a Secret they
// control), who could run any program in the controller anyway: the kubeconfigs that cloud CLIs
// generate need it. The default, the zero kubeconfig.Policy, accepts inline credentials only.
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
	// config holds the content of the certificate files the context references, not their
	// paths, so that comparing configs compares credentials.
	config *rest.Config
	// refDirs are the directories of those files, to be watched.
	refDirs []string
}

// sameCredentials reports whether a and b reach the same endpoint as the same identity, from the
// content of the credentials (never reflect.DeepEqual on rest.Config).
func sameCredentials(a, b *clusterSpec) bool {
	if a == nil || b == nil {
		return a == b
	}
	return clusters.EqualConfigs(a.config, b.config)
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
	base      string
	separator string
	policy    kubeconfig.Policy
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
			spec.refDirs, err = inlineReferencedFiles(spec.config)
		}
		if err != nil {
			res.contextErrs[context] = err
			continue
		}
		res.contexts[context] = spec
	}
	return res
}

// inlineReferencedFiles replaces the certificate files cfg points to by their content, so that a
// certificate renewed in place is a change of credentials like any other, and returns their
// directories. The bearer token file stays a reference on purpose: client-go re-reads it by
// itself, so a new token needs no new cluster.
func inlineReferencedFiles(cfg *rest.Config) ([]string, error) {
	tls := &cfg.TLSClientConfig
	refs := []struct {
		field string
		path  *string
		data  *[]byte
	}{
		{"certificate-authority", &tls.CAFile, &tls.CAData},
		{"client-certificate", &tls.CertFile, &tls.CertData},
		{"client-key", &tls.KeyFile, &tls.KeyData},
	}
	var dirs []string
	for _, ref := range refs {
		if *ref.path == "" {
			continue
		}
		// Inline data takes precedence over the file, in client-go as here.
		if len(*ref.data) == 0 {
			data, err := os.ReadFile(*ref.path)
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", ref.field, err)
			}
			*ref.data = data
			dirs = append(dirs, filepath.Dir(*ref.path))
		}
		*ref.path = ""
	}
	return dirs, nil
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
