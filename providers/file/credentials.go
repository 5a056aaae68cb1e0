// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"mcr.dev/core/clusters"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
)

// TrustedPolicy allows everything a kubeconfig can do, as kubectl allows it: exec and
// auth-provider plugins with any environment, references to local files,
// insecure-skip-tls-verify, plain-http servers and proxy-url. (Credentials inside a server URL
// are refused by every Policy.) Set it as
// Options.Policy for the kubeconfig files the operator names (Files) and only the operator
// writes, or as Options.DiscoveredPolicy when only the operator can write into Dirs and Globs
// too (a Secret they control, mounted as a directory): whoever writes such files could run any
// program in the controller anyway. The kubeconfigs that cloud CLIs generate need it. The
// default of both, the zero kubeconfig.Policy, accepts inline credentials only.
func TrustedPolicy() kubeconfig.Policy {
	return kubeconfig.Policy{
		AllowExec: true, AllowExecEnv: "*", AllowAuthProvider: true, AllowLocalFiles: true,
		AllowInsecure: true, AllowPlainHTTP: true, AllowProxyURL: true,
	}
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

// errEmptyContextName marks a context named "": it cannot be selected by name, since the empty
// name selects the current context, so it would get another context's credentials.
var errEmptyContextName = fmt.Errorf("%w: a context named \"\" cannot be told from the current context; rename it", kubeconfig.ErrInvalid)

// loader turns kubeconfig files into cluster specs.
type loader struct {
	base      string
	separator string
	// policy applies to explicit files, discovered to those found through Dirs and Globs.
	policy, discovered kubeconfig.Policy
	// maxSize bounds every file read, kubeconfigs and referenced files alike.
	maxSize int64
}

// load reads the kubeconfig at path and resolves each of its contexts, under the policy of
// explicit files (Options.Policy) or of discovered ones (Options.DiscoveredPolicy).
func (l loader) load(path string, explicit bool) fileResult {
	data, err := readFile(path, l.maxSize)
	if err != nil {
		return fileResult{err: fmt.Errorf("reading kubeconfig: %w", err)}
	}
	policy := l.discovered
	if explicit {
		policy = l.policy
	}
	return l.parse(path, data, policy)
}

// parse resolves each context of the kubeconfig data read from path.
func (l loader) parse(path string, data []byte, policy kubeconfig.Policy) fileResult {
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
		spec, err := l.resolve(cfg, path, context, policy)
		if err != nil {
			res.contextErrs[context] = err
			continue
		}
		res.contexts[context] = spec
	}
	return res
}

// resolve turns one context into a cluster spec. The policy is checked before any file the
// context references is touched; then the provider reads those files itself (readFile) and hands
// clientcmd a copy of the context with their content in place, because clientcmd opens and
// reads them with plain blocking calls and without a size bound.
func (l loader) resolve(cfg *clientcmdapi.Config, path, context string, policy kubeconfig.Policy) (*clusterSpec, error) {
	if context == "" {
		return nil, errEmptyContextName
	}
	if err := kubeconfig.Check(cfg, context, policy); err != nil {
		return nil, err
	}
	only, refDirs, err := l.inlineReferencedFiles(cfg, context)
	if err != nil {
		return nil, err
	}
	config, err := kubeconfig.RESTConfig(only, context, policy)
	if err != nil {
		return nil, err
	}
	return &clusterSpec{
		name:    clusterName(l.base, l.separator, path, context),
		file:    path,
		context: context,
		config:  config,
		refDirs: refDirs,
	}, nil
}

// inlineReferencedFiles returns a kubeconfig with only context, its cluster and its user, copied,
// in which the certificate files they point to are replaced by their content, so that a
// certificate renewed in place is a change of credentials like any other, and the directories of
// the files read. The bearer token file stays a reference, which client-go re-reads, with its
// content as the token, as clientcmd resolves it; a new token is a change of credentials too.
// Every file is read with readFile: bounded by maxSize, regular files only. cfg has passed
// kubeconfig.Check for context.
func (l loader) inlineReferencedFiles(cfg *clientcmdapi.Config, context string) (*clientcmdapi.Config, []string, error) {
	kctx := cfg.Contexts[context]
	only := clientcmdapi.NewConfig()
	only.CurrentContext = context
	only.Contexts[context] = kctx.DeepCopy()
	cluster := cfg.Clusters[kctx.Cluster].DeepCopy()
	only.Clusters[kctx.Cluster] = cluster
	user := &clientcmdapi.AuthInfo{} // anonymous: nothing to read
	if kctx.AuthInfo != "" {
		user = cfg.AuthInfos[kctx.AuthInfo].DeepCopy()
		only.AuthInfos[kctx.AuthInfo] = user
	}

	var dirs []string
	read := func(field, path string) ([]byte, error) {
		data, err := readFile(path, l.maxSize)
		if err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", field, path, err)
		}
		dirs = append(dirs, filepath.Dir(path))
		return data, nil
	}
	for _, ref := range []struct {
		field string
		path  *string
		data  *[]byte
	}{
		{"certificate-authority", &cluster.CertificateAuthority, &cluster.CertificateAuthorityData},
		{"client-certificate", &user.ClientCertificate, &user.ClientCertificateData},
		{"client-key", &user.ClientKey, &user.ClientKeyData},
	} {
		if *ref.path == "" {
			continue
		}
		// clientcmd refuses both, and would open the file to say so.
		if len(*ref.data) != 0 {
			return nil, nil, fmt.Errorf("%w: context %q sets both %s and %s-data", kubeconfig.ErrInvalid, context, ref.field, ref.field)
		}
		data, err := read(ref.field, *ref.path)
		if err != nil {
			return nil, nil, err
		}
		*ref.data, *ref.path = data, ""
	}
	if user.TokenFile != "" {
		token, err := read("tokenFile", user.TokenFile)
		if err != nil {
			return nil, nil, err
		}
		// An inline token takes precedence over the file, in clientcmd as here.
		if user.Token == "" {
			if len(token) == 0 {
				return nil, nil, fmt.Errorf("reading tokenFile %s: %w", user.TokenFile, errEmptyFile)
			}
			user.Token = string(token)
		}
	}
	return only, dirs, nil
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
