package file

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/clusters"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
)

var (
	_ multicluster.Provider         = &Provider{}
	_ multicluster.ProviderRunnable = &Provider{}
)

// Defaults of Options.
const (
	DefaultDebounce     = 200 * time.Millisecond
	DefaultResyncPeriod = time.Minute
)

// Options configures a Provider. The zero value of every field selects its default.
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
	// character other than "%" and "/". Occurrences in the file part are percent-encoded.
	//
	// Defaults to DefaultSeparator, "+".
	Separator string

	// Policy says which kubeconfig features (exec and auth-provider plugins, references to local
	// files, insecure-skip-tls-verify) are accepted; a context that uses a refused feature is
	// reported as broken and not engaged. Set &kubeconfig.Policy{} for the hardened policy of
	// mcr.dev/core/kubeconfig, which accepts only inline credentials.
	//
	// Defaults to nil, which means TrustedPolicy(): everything is accepted, because files on
	// the controller's own file system are the operator's (see TrustedPolicy).
	Policy *kubeconfig.Policy

	// RESTOptions change each cluster's rest.Config after it is loaded (for example QPS, Burst
	// or a user agent), before credentials are compared and the cluster is created. They must be
	// deterministic: a field they set to a new value on every call (a new Transport, say) makes
	// every reload look like a credential change.
	//
	// Defaults to none.
	RESTOptions []func(*rest.Config) error

	// ClusterOptions are passed to cluster.New for every cluster (scheme, cache options, ...).
	//
	// Defaults to none.
	ClusterOptions []cluster.Option

	// CacheSyncTimeout bounds how long a new cluster's cache may take to sync before it is given
	// up (and retried, see ResyncPeriod). An unreachable cluster never delays others.
	//
	// Defaults to clusters.DefaultCacheSyncTimeout (one minute).
	CacheSyncTimeout time.Duration

	// Debounce is how long the file system must be quiet after a change before the files are
	// read again, so that an editor's or kubelet's burst of events causes one reload. A steady
	// stream of events still causes a reload every 10 × Debounce.
	//
	// Defaults to DefaultDebounce (200ms).
	Debounce time.Duration

	// ResyncPeriod is how often every file is read again without any file system event: a safety
	// net for missed events (network file systems, event queue overflows). It is also the
	// longest retry delay of a cluster that failed to engage (cache sync timeout, an Aware that
	// refused it): retries start after a second and back off exponentially up to it.
	//
	// Defaults to DefaultResyncPeriod (one minute).
	ResyncPeriod time.Duration

	// Log receives the provider's messages, with the cluster under the key "cluster" and the
	// kubeconfig path under "file". Credentials are never logged.
	//
	// Defaults to controller-runtime's logger named "file-provider".
	Log logr.Logger
}

// withDefaults is the only place defaults are applied. It also makes every path absolute and
// clean.
func (o Options) withDefaults() (Options, error) {
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
	if o.Policy == nil {
		trusted := TrustedPolicy()
		o.Policy = &trusted
	}
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = clusters.DefaultCacheSyncTimeout
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.ResyncPeriod <= 0 {
		o.ResyncPeriod = DefaultResyncPeriod
	}
	if o.Log.GetSink() == nil {
		o.Log = ctrllog.Log.WithName("file-provider")
	}

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

// Provider engages one cluster per context of the kubeconfig files it watches. Create it with
// New; a multi-cluster manager runs it (Start). Get and IndexField come from the embedded
// clusters.Clusters.
type Provider struct {
	clusters.Clusters[cluster.Cluster]

	opts   Options
	src    sources
	loader loader
	log    logr.Logger

	started atomic.Bool
	trigger chan struct{} // asks the Start loop for a scan soon
	workers sync.WaitGroup

	mu       sync.Mutex
	known    map[string]map[multicluster.ClusterName]*clusterSpec // last usable specs by file
	members  map[multicluster.ClusterName]*member
	reported map[string]string // last logged error by file, path or cluster
	broken   int               // this provider's share of BrokenFiles
	stopped  bool              // Start is returning: no new workers
}

// member tracks one cluster name from its first sighting until it is disengaged for good.
type member struct {
	want     *clusterSpec // what the files say now; nil when the context is gone
	have     *clusterSpec // what is engaged; nil when nothing is
	busy     bool         // a worker is bringing have to want
	failures int          // consecutive failed engages, for the retry backoff
}

// retryInitialDelay is the first retry delay of a cluster that failed to engage; it doubles with
// every further failure, up to Options.ResyncPeriod.
const retryInitialDelay = time.Second

// New returns a provider for opts. It fails on invalid options (separator, patterns); missing or
// broken files are not an error here: they are reported, and read once they are fixed.
func New(opts Options) (*Provider, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("file provider: %w", err)
	}
	if err := validSeparator(o.Separator); err != nil {
		return nil, fmt.Errorf("file provider: %w", err)
	}
	src := sources{files: o.Files, dirs: o.Dirs, dirPatterns: o.DirPatterns}
	for _, p := range o.DirPatterns {
		if _, err := filepath.Match(p, ""); err != nil {
			return nil, fmt.Errorf("file provider: dir pattern %q: %w", p, err)
		}
	}
	for _, pattern := range o.Globs {
		g, err := newGlob(pattern)
		if err != nil {
			return nil, fmt.Errorf("file provider: %w", err)
		}
		src.globs = append(src.globs, g)
	}
	if o.NameBase == "" {
		o.NameBase = nameBase(src.roots())
	}

	p := &Provider{
		opts: o,
		src:  src,
		loader: loader{
			base:        o.NameBase,
			separator:   o.Separator,
			policy:      *o.Policy,
			restOptions: o.RESTOptions,
		},
		log:      o.Log,
		trigger:  make(chan struct{}, 1),
		known:    map[string]map[multicluster.ClusterName]*clusterSpec{},
		members:  map[multicluster.ClusterName]*member{},
		reported: map[string]string{},
	}
	p.Options = clusters.Options[cluster.Cluster]{
		CacheSyncTimeout: o.CacheSyncTimeout,
		// The provider decides from credential content, before creating a cluster, whether a
		// context changed; AddOrReplace is called only for changes, so it must always replace.
		EqualClusters: func(a, b cluster.Cluster) bool { return a == b },
		Log:           o.Log.V(1),
	}
	return p, nil
}

// ClusterName returns the name under which the provider engages context of the kubeconfig file
// at path (made absolute against the working directory).
func (p *Provider) ClusterName(path, context string) (multicluster.ClusterName, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("file provider: %w", err)
	}
	return clusterName(p.opts.NameBase, p.opts.Separator, abs, context), nil
}

// ReadConfigs reads every configured kubeconfig once, without engaging anything, and returns the
// rest.Config of every usable context by cluster name. The error joins the problems found, each
// naming its file (and context); the configs returned are usable even then. Command-line tools
// use it to list the fleet, or to pick a cluster to run a manager against.
func (p *Provider) ReadConfigs() (map[multicluster.ClusterName]*rest.Config, error) {
	res := p.scan(nil)
	configs := map[multicluster.ClusterName]*rest.Config{}
	for _, specs := range res.byFile {
		for name, spec := range specs {
			configs[name] = rest.CopyConfig(spec.config)
		}
	}
	var errs []error
	for _, path := range slices.Sorted(maps.Keys(res.fileErrs)) {
		errs = append(errs, fmt.Errorf("%s: %w", path, res.fileErrs[path]))
	}
	for _, name := range slices.Sorted(maps.Keys(res.contextErrs)) {
		ce := res.contextErrs[name]
		errs = append(errs, fmt.Errorf("%s: context %q: %w", ce.file, ce.context, ce.err))
	}
	return configs, errors.Join(errs...)
}

// Start reads the kubeconfig files, engages their clusters with aware and keeps them in step
// with the files until ctx ends; then it disengages every cluster and returns. A manager calls
// it. It fails only when the file system cannot be watched at all; broken files and unreachable
// clusters are reported and retried instead.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	if !p.started.CompareAndSwap(false, true) {
		return errors.New("file provider: Start called twice")
	}
	w, err := newWatcher(p.log)
	if err != nil {
		return fmt.Errorf("file provider: %w", err)
	}
	defer func() {
		w.close()
		// Workers stop once ctx is done; then every cluster is stopped.
		p.mu.Lock()
		p.stopped = true
		p.mu.Unlock()
		p.workers.Wait()
		p.RemoveAll()
		p.mu.Lock()
		BrokenFiles.Sub(float64(p.broken))
		p.broken = 0
		p.mu.Unlock()
	}()

	p.sync(ctx, aware, w)
	resync := time.NewTicker(p.opts.ResyncPeriod)
	defer resync.Stop()
	d := newDebouncer(p.opts.Debounce)
	defer d.stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.changed():
			d.poke()
		case <-p.trigger:
			d.poke()
		case <-d.fire():
			d.fired()
			p.sync(ctx, aware, w)
		case <-resync.C:
			p.sync(ctx, aware, w)
		}
	}
}

// requestScan asks the Start loop for another scan.
func (p *Provider) requestScan() {
	select {
	case p.trigger <- struct{}{}:
	default:
	}
}

// contextError is a context that cannot be used.
type contextError struct {
	file, context string
	err           error
}

// scanResult is what one pass over the configured paths found.
type scanResult struct {
	// byFile holds the usable specs of each file; for a broken file or context, the last usable
	// ones, so that a typo does not take clusters away.
	byFile      map[string]map[multicluster.ClusterName]*clusterSpec
	fileErrs    map[string]error
	contextErrs map[multicluster.ClusterName]contextError
	watch       map[string]struct{}
}

// scan reads every kubeconfig; prev is the previous result's byFile (nil for none).
func (p *Provider) scan(prev map[string]map[multicluster.ClusterName]*clusterSpec) scanResult {
	l := p.src.list()
	res := scanResult{
		byFile:      map[string]map[multicluster.ClusterName]*clusterSpec{},
		fileErrs:    l.errs,
		contextErrs: map[multicluster.ClusterName]contextError{},
		watch:       l.watch,
	}
	for _, path := range l.files {
		r := p.loader.load(path)
		if r.err != nil {
			res.fileErrs[path] = r.err
			if old, ok := prev[path]; ok {
				res.byFile[path] = old
			}
			continue
		}
		specs := map[multicluster.ClusterName]*clusterSpec{}
		for _, spec := range r.contexts {
			specs[spec.name] = spec
		}
		for context, err := range r.contextErrs {
			name := clusterName(p.loader.base, p.loader.separator, path, context)
			res.contextErrs[name] = contextError{file: path, context: context, err: err}
			if old, ok := prev[path][name]; ok {
				specs[name] = old
			}
		}
		res.byFile[path] = specs
	}
	for _, specs := range res.byFile {
		for _, spec := range specs {
			for _, dir := range spec.refDirs {
				res.watch[nearestDir(dir)] = struct{}{}
			}
		}
	}
	return res
}

// sync scans the files, updates the watches, reports problems and sets every cluster's target.
func (p *Provider) sync(ctx context.Context, aware multicluster.Aware, w *watcher) {
	p.mu.Lock()
	prev := p.known
	p.mu.Unlock()
	res := p.scan(prev)

	if w.update(res.watch) {
		// A directory watched for the first time may have changed between the scan and the
		// watch: look once more, now that changes are seen.
		p.requestScan()
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	p.known = res.byFile
	p.reportLocked(res)

	desired := map[multicluster.ClusterName]*clusterSpec{}
	for _, specs := range res.byFile {
		maps.Copy(desired, specs)
	}
	for name, spec := range desired {
		m, ok := p.members[name]
		if !ok {
			m = &member{}
			p.members[name] = m
		}
		m.want = spec
	}
	for name, m := range p.members {
		if _, ok := desired[name]; !ok {
			m.want = nil
		}
		p.kickLocked(ctx, aware, name, m)
	}
}

// reportLocked logs problems when they appear, change or go away, and counts them every time.
func (p *Provider) reportLocked(res scanResult) {
	seen := map[string]struct{}{}
	for path, err := range res.fileErrs {
		LoadErrors.WithLabelValues(path, reason(err)).Inc()
		key := "file:" + path
		seen[key] = struct{}{}
		if p.reported[key] != err.Error() {
			p.reported[key] = err.Error()
			p.log.Error(err, "Cannot use kubeconfig file; its clusters stay as they were until it is fixed or deleted", "file", path)
		}
	}
	for name, ce := range res.contextErrs {
		LoadErrors.WithLabelValues(ce.file, reason(ce.err)).Inc()
		key := "cluster:" + string(name)
		seen[key] = struct{}{}
		if p.reported[key] != ce.err.Error() {
			p.reported[key] = ce.err.Error()
			p.log.Error(ce.err, "Cannot use kubeconfig context; its cluster stays as it was until it is fixed or removed",
				"cluster", name, "file", ce.file, "context", ce.context)
		}
	}
	for key := range p.reported {
		if _, ok := seen[key]; !ok {
			delete(p.reported, key)
			if path, ok := strings.CutPrefix(key, "file:"); ok {
				p.log.Info("Kubeconfig file problem resolved (fixed or deleted)", "file", path)
			} else {
				p.log.Info("Kubeconfig context problem resolved (fixed or removed)", "cluster", strings.TrimPrefix(key, "cluster:"))
			}
		}
	}
	BrokenFiles.Add(float64(len(res.fileErrs) - p.broken))
	p.broken = len(res.fileErrs)
}

// needsWorkLocked reports whether m's engaged state differs from its target.
func (p *Provider) needsWorkLocked(ctx context.Context, name multicluster.ClusterName, m *member) bool {
	if m.want == nil {
		return m.have != nil
	}
	if m.have == nil || !sameCredentials(m.have, m.want) {
		return true
	}
	// Engaged as wanted, unless the cluster stopped on its own since (it is then forgotten by
	// the embedded set and must be started again).
	_, err := p.GetTyped(ctx, name)
	return err != nil
}

// kickLocked starts a worker for m unless one is running (it will see the new target) or there
// is nothing to do.
func (p *Provider) kickLocked(ctx context.Context, aware multicluster.Aware, name multicluster.ClusterName, m *member) {
	if m.busy || p.stopped || ctx.Err() != nil {
		return
	}
	if !p.needsWorkLocked(ctx, name, m) {
		if m.want == nil && m.have == nil {
			delete(p.members, name)
		}
		return
	}
	m.busy = true
	p.workers.Add(1)
	go p.work(ctx, aware, name, m)
}

// work brings one cluster to its target: engage, replace or disengage, until the target stops
// moving. A failed engage ends the worker and schedules a retry with exponential backoff; a scan
// in the meantime (a file changed) retries at once.
func (p *Provider) work(ctx context.Context, aware multicluster.Aware, name multicluster.ClusterName, m *member) {
	defer p.workers.Done()
	for {
		p.mu.Lock()
		if ctx.Err() != nil || !p.needsWorkLocked(ctx, name, m) {
			m.busy = false
			if m.want == nil && m.have == nil && p.members[name] == m {
				delete(p.members, name)
			}
			p.mu.Unlock()
			return
		}
		want, have := m.want, m.have
		p.mu.Unlock()

		if want == nil {
			p.Remove(name)
			p.log.Info("Disengaged cluster: its context or file is gone", "cluster", name, "file", have.file, "context", have.context)
			p.mu.Lock()
			m.have = nil
			p.mu.Unlock()
			continue
		}

		log := p.log.WithValues("cluster", name, "file", want.file, "context", want.context)
		if err := p.engage(ctx, aware, want); err != nil {
			p.mu.Lock()
			m.busy = false
			m.failures++
			delay := min(retryInitialDelay<<min(m.failures-1, 20), p.opts.ResyncPeriod)
			p.mu.Unlock()
			if ctx.Err() != nil {
				return
			}
			log.Error(err, "Cannot engage cluster; retrying", "retryIn", delay.String())
			time.AfterFunc(delay, func() {
				p.mu.Lock()
				defer p.mu.Unlock()
				if p.members[name] == m {
					p.kickLocked(ctx, aware, name, m)
				}
			})
			return
		}
		if have == nil {
			log.Info("Engaged cluster")
		} else {
			log.Info("Re-engaged cluster: its credentials or endpoint changed")
		}
		p.mu.Lock()
		m.have = want
		m.failures = 0
		p.mu.Unlock()
	}
}

// engage creates a cluster for spec and engages it, replacing the engaged instance of the name.
func (p *Provider) engage(ctx context.Context, aware multicluster.Aware, spec *clusterSpec) error {
	cl, err := cluster.New(spec.config, p.opts.ClusterOptions...)
	if err != nil {
		return fmt.Errorf("creating cluster: %w", err)
	}
	return p.AddOrReplace(ctx, spec.name, cl, aware)
}
