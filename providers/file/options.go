// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/providers/kit"
)

// providerName names the provider's logger and queue.
const providerName = "file-provider"

// Defaults of Options.
const (
	DefaultDebounce = 200 * time.Millisecond

	// DefaultResyncPeriod is the file provider's own default of Options.ResyncPeriod: files
	// cost little to read, and network file systems announce no changes.
	DefaultResyncPeriod = time.Minute

	// DefaultMaxFileSize is the default of Options.MaxFileSize, 1 MiB: the most a Kubernetes
	// Secret or ConfigMap can hold, and a few hundred contexts with inline certificates.
	DefaultMaxFileSize = 1 << 20
)

// DefaultKubeconfigGlobs is multicluster-runtime's name of DefaultDirPatterns, the default of
// Options.DirPatterns (and so of what Options.KubeconfigGlobs would select). Unlike
// multicluster-runtime's list, it also holds "kubeconfig", the key of a mounted Secret.
var DefaultKubeconfigGlobs = DefaultDirPatterns

// Options configures a Provider. The zero value of every field selects its default; defaults are
// applied in one place, Options.withDefaults.
type Options struct {
	// Files are kubeconfig files. A file that does not exist yet is read as soon as it is
	// created; the clusters of a deleted file are disengaged.
	//
	// When Files, Dirs and Globs are all empty, Files defaults to the entries of $KUBECONFIG
	// (separated by os.PathListSeparator, ":" on Unix, as for kubectl), or, when $KUBECONFIG is
	// unset or empty, to $HOME/.kube/config.
	Files []string

	// Dirs are directories of kubeconfig files: every entry whose name matches one of
	// DirPatterns is read. Subdirectories and hidden entries (names starting with ".", such as
	// the ..data link of a ConfigMap or Secret volume) are skipped. A directory that does not
	// exist yet is read as soon as it is created.
	//
	// Defaults to none (see Files).
	Dirs []string

	// Globs are patterns of kubeconfig files, with the syntax of filepath.Match in each path
	// element, for example /etc/fleets/*/kubeconfig. Directories that start to match later are
	// noticed. A wildcard matches hidden names only when its pattern element starts with ".".
	//
	// Defaults to none (see Files).
	Globs []string

	// DirPatterns select the files of Dirs by name, with the syntax of filepath.Match.
	//
	// Defaults to DefaultDirPatterns: kubeconfig, kubeconfig.yaml, kubeconfig.yml, *.kubeconfig,
	// *.kubeconfig.yaml and *.kubeconfig.yml.
	DirPatterns []string

	// NameBase is the directory that cluster names are relative to (see the package
	// documentation for the naming scheme). Set it to keep names unchanged when adding or
	// removing configured paths.
	//
	// Defaults to the deepest directory that contains the directory of every entry of Files,
	// every entry of Dirs, and the part before the first wildcard of every entry of Globs. For a
	// single directory that is the directory itself, so its files are named by their base names.
	NameBase string

	// Separator separates the file part of a cluster name from the context. It must be one
	// character other than "%", "/" and the hexadecimal digits (0-9, A-F, a-f), which occur in
	// percent-encoding. Occurrences in the file part are percent-encoded.
	//
	// Defaults to DefaultSeparator, "+".
	Separator string

	// DiscoveredPolicy is the Policy for the kubeconfig files found through Dirs and Globs: any
	// file that lands in those directories is read, so it is only as trusted as whoever can
	// write there. Options.Policy applies to the files named in Files (and to those of
	// $KUBECONFIG or $HOME/.kube/config), which the operator chose one by one; a file that is
	// both named and discovered is read under Policy.
	//
	// Defaults to the zero kubeconfig.Policy, inline credentials only, whatever Policy is. Set it
	// to TrustedPolicy() when only the operator can write into Dirs and Globs.
	DiscoveredPolicy kubeconfig.Policy

	// MaxFileSize bounds, in bytes, every file the provider reads: kubeconfigs and the files
	// they reference (certificate-authority, client-certificate, client-key, tokenFile). A
	// bigger file is an error on that file (or on the context that references it). Whatever
	// the size, only regular files (or symlinks to them) are read: a named pipe, a device, a
	// socket or a directory where a kubeconfig is expected is an error on that path, and is
	// never opened in a way that could block.
	//
	// Defaults to DefaultMaxFileSize (1 MiB).
	MaxFileSize int64

	// Debounce is how long the file system must be quiet after a change before the files are
	// read again, so that an editor's or kubelet's burst of events causes one reload. A steady
	// stream of events still causes a reload every 10 × Debounce.
	//
	// Defaults to DefaultDebounce (200ms).
	Debounce time.Duration

	// KubeconfigFiles is multicluster-runtime's name of Files, so that its Options literals
	// compile: the entries are appended to Files, empty entries dropped.
	KubeconfigFiles []string

	// KubeconfigDirs is multicluster-runtime's name of Dirs: the entries are appended to Dirs,
	// empty entries dropped.
	KubeconfigDirs []string

	// KubeconfigGlobs is multicluster-runtime's name of the patterns that select the files of
	// directories, which is DirPatterns here (not Globs, which are patterns of whole paths): the
	// entries are appended to DirPatterns, empty entries dropped, and like DirPatterns they
	// apply to every directory of Dirs and KubeconfigDirs. An entry with a path separator
	// ("*/kubeconfig") matches below each of those directories, as in multicluster-runtime: it
	// is added to Globs once for every directory, joined to it.
	//
	// As in multicluster-runtime, patterns given here replace the default ones: with
	// KubeconfigGlobs set, DirPatterns does not default to DefaultDirPatterns.
	KubeconfigGlobs []string

	// ClusterOptions is multicluster-runtime's top-level field, kept so that its Options
	// literals compile. Its name hides the shared Options.ClusterOptions, the field every other
	// provider has, which still works: both are passed to cluster.New for every member,
	// Options.ClusterOptions first.
	//
	// Deprecated: use Options.ClusterOptions (kit.Options{ClusterOptions: ...}), the same
	// field in every provider.
	ClusterOptions []cluster.Option

	// Options are the fields every provider shares (Policy, RESTOptions, ClusterOptions,
	// CacheSyncTimeout, SkipAccessCheck, retry delays, ResyncPeriod, EventRecorder, Logger),
	// with the defaults documented there, except:
	//
	//   - ResyncPeriod, which is also how often every file is read again without any file
	//     system event (a safety net for network file systems and lost events), defaults to
	//     DefaultResyncPeriod (one minute);
	//   - Policy applies to the files of Files only (see DiscoveredPolicy for the others). Its
	//     default, the zero kubeconfig.Policy, accepts inline credentials only, as in every
	//     provider. Kubeconfigs that cloud CLIs write use exec plugins and files; set Policy to
	//     TrustedPolicy() for files only the operator writes.
	//
	// The provider has no host cluster and records no Events. The Logger is named
	// "file-provider"; the provider's own messages carry the kubeconfig path under "file".
	kit.Options
}

// withDefaults is the only place defaults are applied. It also makes every path absolute and
// clean.
func (o Options) withDefaults() (Options, error) {
	o = o.withUpstreamFields()
	if len(o.Files)+len(o.Dirs)+len(o.Globs) == 0 {
		if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
			o.Files = slices.DeleteFunc(filepath.SplitList(env), func(s string) bool { return s == "" })
		}
		if len(o.Files) == 0 {
			o.Files = []string{clientcmd.RecommendedHomeFile}
		}
	}
	if o.DirPatterns == nil {
		o.DirPatterns = slices.Clone(DefaultDirPatterns)
	}
	if o.Separator == "" {
		o.Separator = DefaultSeparator
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.ResyncPeriod <= 0 {
		o.ResyncPeriod = DefaultResyncPeriod
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	o.SetDefaults(providerName)

	var err error
	abs := func(paths []string) []string {
		out := make([]string, 0, len(paths))
		for _, p := range paths {
			a, aerr := filepath.Abs(p)
			if aerr != nil {
				err = errors.Join(err, fmt.Errorf("path %q: %w", p, aerr))
				continue
			}
			out = append(out, a)
		}
		return out
	}
	o.Files, o.Dirs, o.Globs = abs(o.Files), abs(o.Dirs), abs(o.Globs)
	if o.NameBase != "" {
		o.NameBase = abs([]string{o.NameBase})[0]
	}
	return o, err
}

// withUpstreamFields merges the fields named as in multicluster-runtime (KubeconfigFiles,
// KubeconfigDirs, KubeconfigGlobs, ClusterOptions) into their counterparts and clears them, so
// that applying it twice changes nothing.
func (o Options) withUpstreamFields() Options {
	nonEmpty := func(s []string) []string {
		return slices.DeleteFunc(slices.Clone(s), func(e string) bool { return e == "" })
	}
	o.Files = append(slices.Clip(o.Files), nonEmpty(o.KubeconfigFiles)...)
	o.Dirs = append(slices.Clip(o.Dirs), nonEmpty(o.KubeconfigDirs)...)
	patterns := nonEmpty(o.KubeconfigGlobs)
	if len(patterns) > 0 && o.DirPatterns == nil {
		o.DirPatterns = []string{}
	}
	for _, pattern := range patterns {
		if !strings.ContainsRune(pattern, filepath.Separator) {
			o.DirPatterns = append(slices.Clip(o.DirPatterns), pattern)
			continue
		}
		for _, dir := range o.Dirs {
			o.Globs = append(slices.Clip(o.Globs), filepath.Join(dir, pattern))
		}
	}
	if len(o.ClusterOptions) > 0 {
		o.Options.ClusterOptions = append(slices.Clip(o.Options.ClusterOptions), o.ClusterOptions...)
	}
	o.KubeconfigFiles, o.KubeconfigDirs, o.KubeconfigGlobs, o.ClusterOptions = nil, nil, nil, nil
	return o
}
