// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ErrMemberNotFound is returned (wrapped) when a member name is not part of the fleet.
var ErrMemberNotFound = errors.New("member not found")

// Options configure a Fleet. The zero value is valid: a fleet with etcd only, to which members
// are added with AddMember.
type Options struct {
	// Members names the members started together with the fleet, concurrently. Each name must
	// be a DNS-1123 label (it appears in the kubeconfig context and the etcd prefix) and unique.
	// Default: none.
	Members []string

	// BinaryDir is the directory holding the kube-apiserver and etcd binaries.
	// Default: the first set of $MCR_ENVTEST_ASSETS, $KUBEBUILDER_ASSETS (a directory laid out
	// as `setup-envtest use -p path` prints it), and bin/envtest/<KubernetesVersion> in the
	// nearest directory above the working directory that contains go.work (where
	// `make envtest` builds them). See AssetsEnv for why mcr's variable comes first.
	BinaryDir string

	// StartTimeout bounds the start of etcd, and of each member until its /readyz answers ok.
	// A context passed to Start, AddMember or Member.Start may end the wait sooner.
	// Default: 2 minutes (generous on purpose: several apiservers starting at once on a busy
	// 2-core machine take far longer than one on an idle one).
	StartTimeout time.Duration

	// StopGracePeriod is how long a stopping process may take after SIGTERM before it gets
	// SIGKILL. Default: 10 seconds.
	StopGracePeriod time.Duration

	// APIServerFlags add kube-apiserver flags or override the defaults listed by
	// DefaultAPIServerFlags. Keys are flag names without leading dashes; every entry is passed
	// as --key=value. Flags the fleet manages itself (addresses, ports, certificates, etcd,
	// service-account keys) cannot be set here. Default: none.
	APIServerFlags map[string]string

	// EtcdFlags add etcd flags or override the defaults listed by DefaultEtcdFlags, in the
	// same form as APIServerFlags. Default: none.
	EtcdFlags map[string]string

	// Output receives the output of etcd and every kube-apiserver, one line at a time,
	// prefixed with "[etcd] " or "[<member>] ". Default: discarded; the last lines of a process
	// that fails to start are part of the returned error either way.
	Output io.Writer

	// TempDir is the directory in which the fleet creates its working directory (etcd data,
	// certificates). The working directory is removed by Stop. Default: os.TempDir().
	TempDir string

	// binaries is BinaryDir with where it came from, for errors.
	binaries binaryDir
}

const (
	defaultStartTimeout    = 2 * time.Minute
	defaultStopGracePeriod = 10 * time.Second
)

// setDefaults fills unset options; it is the only place defaults are decided.
func (o *Options) setDefaults() error {
	if o.BinaryDir == "" {
		dir, err := defaultBinaryDir()
		if err != nil {
			return err
		}
		o.BinaryDir, o.binaries = dir.path, dir
	} else {
		o.binaries = binaryDir{path: o.BinaryDir, origin: "Options.BinaryDir"}
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = defaultStartTimeout
	}
	if o.StopGracePeriod <= 0 {
		o.StopGracePeriod = defaultStopGracePeriod
	}
	if o.Output == nil {
		o.Output = io.Discard
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	return nil
}

// Fleet is one etcd and a set of kube-apiservers (members) that store their data in it under
// distinct prefixes. All methods are safe for concurrent use.
type Fleet struct {
	opts          Options
	apiserverPath string
	etcdPath      string
	dir           string
	out           io.Writer
	etcd          *Process
	etcdURL       string

	mu         sync.Mutex
	members    []*Member
	reserved   map[string]bool // names of members being added or present
	generation int             // makes etcd prefixes unique when a name is reused
	stopped    bool
}

// Start starts etcd and the members in opts.Members, and returns once every member's /readyz
// answers ok. ctx bounds the start only: the processes keep running until Stop. On error,
// everything already started is stopped again.
func Start(ctx context.Context, opts Options) (*Fleet, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, fmt.Errorf("envtest: %w", err)
	}
	seen := map[string]bool{}
	for _, name := range opts.Members {
		if err := validateMemberName(name); err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, fmt.Errorf("envtest: member %q is listed twice", name)
		}
		seen[name] = true
	}
	// Flags are checked here so that a bad one fails before any process starts.
	if _, err := mergeFlags(DefaultAPIServerFlags(), opts.APIServerFlags, managedAPIServerFlags); err != nil {
		return nil, err
	}
	if _, err := mergeFlags(DefaultEtcdFlags(), opts.EtcdFlags, managedEtcdFlags); err != nil {
		return nil, err
	}

	apiserverPath, etcdPath, err := checkBinaries(opts.binaries)
	if err != nil {
		return nil, fmt.Errorf("envtest: %w", err)
	}
	if err := os.MkdirAll(opts.TempDir, 0o755); err != nil {
		return nil, fmt.Errorf("envtest: creating %s: %w", opts.TempDir, err)
	}
	dir, err := os.MkdirTemp(opts.TempDir, "mcr-envtest-")
	if err != nil {
		return nil, fmt.Errorf("envtest: creating the fleet directory: %w", err)
	}
	f := &Fleet{
		opts:          opts,
		apiserverPath: apiserverPath,
		etcdPath:      etcdPath,
		dir:           dir,
		out:           &syncWriter{w: opts.Output},
		reserved:      map[string]bool{},
	}
	if err := f.startEtcd(ctx); err != nil {
		return nil, errors.Join(err, f.Stop())
	}

	members := make([]*Member, len(opts.Members))
	for i, name := range opts.Members {
		m, err := f.newMember(name)
		if err != nil {
			return nil, errors.Join(err, f.Stop())
		}
		members[i] = m
	}
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Go(func() { errs[i] = m.Start(ctx) })
	}
	wg.Wait()
	f.mu.Lock()
	f.members = append(f.members, members...)
	f.mu.Unlock()
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(err, f.Stop())
	}
	return f, nil
}

// Members returns the members in the order they were added.
func (f *Fleet) Members() []*Member {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*Member(nil), f.members...)
}

// Member returns the member with the given name, or nil.
func (f *Fleet) Member(name string) *Member {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.members {
		if m.name == name {
			return m
		}
	}
	return nil
}

// AddMember starts another kube-apiserver on the fleet's etcd and returns it once ready. The
// new member starts empty, even if a member of the same name existed before and was removed.
func (f *Fleet) AddMember(ctx context.Context, name string) (*Member, error) {
	if err := validateMemberName(name); err != nil {
		return nil, err
	}
	m, err := f.newMember(name)
	if err != nil {
		return nil, err
	}
	if err := m.Start(ctx); err != nil {
		f.release(m)
		return nil, errors.Join(err, m.remove())
	}
	f.mu.Lock()
	stopped := f.stopped
	if !stopped {
		f.members = append(f.members, m)
	}
	f.mu.Unlock()
	if stopped {
		// Stop ran while this member was starting and did not see it.
		return nil, errors.Join(fmt.Errorf("envtest: fleet stopped while member %q was starting", name), m.remove())
	}
	return m, nil
}

// RemoveMember stops a member's kube-apiserver and forgets it. Its data stays in etcd under a
// prefix no later member uses.
func (f *Fleet) RemoveMember(name string) error {
	f.mu.Lock()
	var m *Member
	for i, candidate := range f.members {
		if candidate.name == name {
			m = candidate
			f.members = append(f.members[:i:i], f.members[i+1:]...)
			break
		}
	}
	if m != nil {
		delete(f.reserved, name)
	}
	f.mu.Unlock()
	if m == nil {
		return fmt.Errorf("envtest: removing %q: %w", name, ErrMemberNotFound)
	}
	return m.remove()
}

// Stop stops every member and etcd (SIGTERM, then SIGKILL after Options.StopGracePeriod) and
// removes the fleet's working directory. It is safe to call more than once.
func (f *Fleet) Stop() error {
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return nil
	}
	f.stopped = true
	members := f.members
	f.members = nil
	f.mu.Unlock()

	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Go(func() { errs[i] = m.remove() })
	}
	wg.Wait()
	if f.etcd != nil {
		errs = append(errs, f.etcd.Stop(f.opts.StopGracePeriod))
	}
	if err := os.RemoveAll(f.dir); err != nil {
		errs = append(errs, fmt.Errorf("envtest: removing %s: %w", f.dir, err))
	}
	return errors.Join(errs...)
}

// newMember reserves a name and prepares the member's directory and credentials.
func (f *Fleet) newMember(name string) (*Member, error) {
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return nil, fmt.Errorf("envtest: adding member %q: fleet is stopped", name)
	}
	if f.reserved[name] {
		f.mu.Unlock()
		return nil, fmt.Errorf("envtest: member %q already exists", name)
	}
	f.reserved[name] = true
	f.generation++
	id := fmt.Sprintf("%s-%d", name, f.generation)
	f.mu.Unlock()

	m := &Member{
		fleet:      f,
		name:       name,
		dir:        filepath.Join(f.dir, id),
		etcdPrefix: "/mcr-envtest/" + id,
	}
	creds, err := newMemberCredentials(name)
	if err == nil {
		m.creds = creds
		err = os.MkdirAll(m.dir, 0o700)
	}
	if err == nil {
		err = creds.writeFiles(m.dir)
	}
	if err != nil {
		f.release(m)
		return nil, fmt.Errorf("envtest: preparing member %q: %w", name, err)
	}
	return m, nil
}

func (f *Fleet) release(m *Member) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.reserved, m.name)
}

func (f *Fleet) startEtcd(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, f.opts.StartTimeout)
	defer cancel()
	dataDir := filepath.Join(f.dir, "etcd")
	var lastErr error
	for range portAttempts {
		clientPort, err := FreePort()
		if err != nil {
			return err
		}
		peerPort, err := FreePort()
		if err != nil {
			return err
		}
		clientURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
		peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
		managed := map[string]string{
			"name":                        "mcr-envtest",
			"data-dir":                    dataDir,
			"listen-client-urls":          clientURL,
			"advertise-client-urls":       clientURL,
			"listen-peer-urls":            peerURL,
			"initial-advertise-peer-urls": peerURL,
			"initial-cluster":             "mcr-envtest=" + peerURL,
		}
		args, err := mergeFlags(DefaultEtcdFlags(), f.opts.EtcdFlags, managedEtcdFlags)
		if err != nil {
			return err
		}
		args = append(args, flagList(managed)...)
		p, err := StartProcess("etcd", f.etcdPath, args, f.out)
		if err != nil {
			return fmt.Errorf("envtest: %w", err)
		}
		err = waitEtcdReady(ctx, p, clientURL)
		if err == nil {
			f.etcd = p
			f.etcdURL = clientURL
			return nil
		}
		lastErr = errors.Join(err, p.Stop(f.opts.StopGracePeriod))
		if !portInUse(p) {
			break
		}
		// Another process took a port between our probe and etcd's bind: start over clean.
		if err := os.RemoveAll(dataDir); err != nil {
			return errors.Join(lastErr, err)
		}
	}
	return fmt.Errorf("envtest: starting etcd: %w", lastErr)
}

// portAttempts is how often a first start is tried with fresh ports when the chosen port was
// taken by someone else in the meantime.
const portAttempts = 3

func validateMemberName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("envtest: invalid member name %q: %s", name, strings.Join(errs, "; "))
	}
	return nil
}
