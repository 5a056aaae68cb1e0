// Package file is a cluster provider that engages one cluster per context of kubeconfig files
// on the local file system, and keeps the fleet in step with the files while they change.
//
// # What it watches
//
// Options.Files (kubeconfig files), Options.Dirs (directories; files matching
// Options.DirPatterns, by default kubeconfig, *.kubeconfig and their .yaml/.yml forms) and
// Options.Globs (patterns such as /etc/fleets/*/kubeconfig). With none of them set it reads
// $KUBECONFIG (a list, separated as for kubectl) or else $HOME/.kube/config. ParsePaths sorts a
// command-line path list into the three.
//
// The provider watches directories with fsnotify, so it sees files created, changed, deleted and
// replaced by rename (editors), ConfigMap and Secret volume updates (the ..data symlink swap),
// directories created later and symlinked files edited at their target. Bursts of events are
// debounced (Options.Debounce) and every file is read again each Options.ResyncPeriod as a
// safety net.
//
// # Cluster names
//
// A cluster is named
//
//	<file>+<context>
//
// where <file> is the kubeconfig's path relative to Options.NameBase, with "/" between path
// elements and every "%" and "+" in it percent-encoded ("%25", "%2B"), and <context> is the
// context name as written in the file. NameBase defaults to the deepest directory holding all
// configured paths, so a single directory /etc/fleet with east.kubeconfig (context "east") and
// merged.kubeconfig (contexts "east" and "west") gives
//
//	east.kubeconfig+east
//	merged.kubeconfig+east
//	merged.kubeconfig+west
//
// and $HOME/.kube/config with contexts kind-a and kind-b gives config+kind-a and config+kind-b.
// The scheme is collision free: <file> never contains the separator, so a name splits back into
// exactly one file and one context, and a context name that contains "+" (or a file name that
// does) cannot make two clusters share a name. It is stable: it depends only on the configured
// paths, the file path and the context name, never on discovery order, on which other files
// exist, or on symlink targets, so a restart with the same options gives the same names. The
// separator can be changed with Options.Separator; Provider.ClusterName computes a name.
//
// # Changes
//
// On every change the files are read again and each context's effective credentials (the
// resolved rest.Config, with the content of the certificate files it references in place of
// their paths, compared with clusters.EqualConfigs) are compared with the last ones. Only
// clusters whose credentials or endpoint changed are engaged again: a new cluster is engaged
// first and the old one disengaged after (no gap for Get). Unchanged contexts are left alone,
// without creating a cluster.Cluster for them. Contexts that vanish, and all clusters of a
// deleted file, are disengaged.
//
// # Broken files
//
// A file that cannot be read or parsed, is empty, or a context that cannot be used (a missing
// cluster entry, a feature refused by Options.Policy) is logged once with its path (key "file"),
// counted in mcr_file_provider_load_errors_total{file,reason} and in the gauge
// mcr_file_provider_broken_files, and otherwise ignored: every other file keeps working, and the
// clusters the broken file had before stay engaged as they were until it is fixed (then it is
// read as usual) or deleted (then they are disengaged).
//
// # Engaging, credentials and the provider kit
//
// The provider runs on the provider kit (mcr.dev/core/providers/kit), like every provider: a
// cluster is engaged once it answers an access check with its credentials and its cache has
// synced, both bounded by Options.CacheSyncTimeout. A cluster that does not answer or refuses
// the credentials is not engaged; it is logged once and retried with backoff
// (Options.RetryMinDelay to Options.RetryMaxDelay) and whenever its credentials change, and it
// delays nobody else. Options.Policy defaults to the hardened policy of mcr.dev/core/kubeconfig
// (inline credentials only); TrustedPolicy allows exec plugins, auth-provider plugins, file
// references and insecure-skip-tls-verify for files only the operator writes. Credentials are
// never logged. docs/providers/file.md lists what changed with the kit.
//
// The provider needs no RBAC on any host cluster: it reads only local files. See README.md for
// options, file permissions and a quickstart.
package file
