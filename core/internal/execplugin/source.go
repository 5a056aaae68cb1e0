// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package execplugin

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	clientauthentication "k8s.io/client-go/pkg/apis/clientauthentication"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"mcr.dev/core/internal/membertransport"
)

// Defaults of Options.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxOutput = 1 << 20
)

// Options bound the calls of a Source.
type Options struct {
	// Member names the member in errors, e.g. "fleet/east".
	Member string

	// Timeout bounds each run of the plugin. Defaults to DefaultTimeout.
	Timeout time.Duration

	// MaxOutput bounds what the plugin may write to stdout, in bytes. Defaults to
	// DefaultMaxOutput.
	MaxOutput int64
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	return o
}

// Errors of a call, wrapped by what Get returns.
var (
	// ErrTimeout: the plugin did not answer within Options.Timeout.
	ErrTimeout = errors.New("the plugin did not answer in time")
	// ErrOutputTooLarge: the plugin wrote more than Options.MaxOutput bytes to stdout.
	ErrOutputTooLarge = errors.New("the plugin wrote too much")
	// ErrClosed: the Source was closed (the member was disengaged, the provider stopped).
	ErrClosed = errors.New("the member's credential source was closed")
	// ErrFailed: the plugin could not be started, failed, or answered with something that is
	// no usable ExecCredential.
	ErrFailed = errors.New("the plugin failed")
)

// Credential is what one run of the plugin produced.
type Credential struct {
	// Token is the bearer token, empty when the plugin answered with a certificate only.
	Token string
	// Cert is the client certificate, nil when the plugin answered with a token only.
	Cert *tls.Certificate
	// Expiry is when the credential must be replaced; zero when the plugin did not say.
	Expiry time.Time
}

func (c *Credential) expired(now time.Time) bool {
	return !c.Expiry.IsZero() && !now.Before(c.Expiry)
}

// Source obtains the credentials of one member from its exec plugin. It lives as long as the
// context given to New, or until Close.
type Source struct {
	opts    Options
	exec    *clientcmdapi.ExecConfig
	cluster *clientauthentication.Cluster // nil unless provideClusterInfo
	command string                        // the command's base name, for errors
	now     func() time.Time
	// transport carries the member's requests; nil until New builds it.
	transport *membertransport.Transport

	ctx       context.Context // ends when the Source closes
	cancel    context.CancelFunc
	stopAfter func() bool // unregisters the Close at the end of New's context
	calls     sync.WaitGroup

	mu      sync.Mutex
	current *Credential
	running *call
	closed  bool
}

// call is one run of the plugin, shared by everyone who asks while it runs.
type call struct {
	done chan struct{}
	cred *Credential
	err  error
}

// newSource checks what can be checked without running the plugin (apiVersion, interactive
// mode, plugin policy, cluster info) and returns a Source that lives until ctx ends or Close.
func newSource(ctx context.Context, cfg *rest.Config, opts Options) (*Source, error) {
	opts = opts.withDefaults()
	ec := cfg.ExecProvider
	s := &Source{opts: opts, command: filepath.Base(ec.Command), now: time.Now}
	if ec.Command == "" {
		return nil, s.errorf(ErrFailed, "has no command")
	}
	if _, ok := apiVersions[ec.APIVersion]; !ok {
		return nil, s.errorf(ErrFailed, "asks for apiVersion %q; supported are client.authentication.k8s.io/v1 and v1beta1", ec.APIVersion)
	}
	switch ec.InteractiveMode {
	case "", clientcmdapi.NeverExecInteractiveMode, clientcmdapi.IfAvailableExecInteractiveMode:
	case clientcmdapi.AlwaysExecInteractiveMode:
		return nil, s.errorf(ErrFailed, "needs a terminal (interactiveMode Always), which a controller does not have")
	default:
		return nil, s.errorf(ErrFailed, "has an unknown interactiveMode %q", ec.InteractiveMode)
	}
	if err := checkPolicy(ec); err != nil {
		return nil, s.errorf(ErrFailed, "%s", err)
	}
	if ec.ProvideClusterInfo {
		cluster, err := rest.ConfigToExecCluster(cfg)
		if err != nil {
			return nil, s.errorf(ErrFailed, "cannot be given the cluster's data: %v", err)
		}
		s.cluster = cluster
	}
	s.exec = ec.DeepCopy()
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.stopAfter = context.AfterFunc(ctx, s.Close)
	return s, nil
}

// checkPolicy applies the plugin policy a program may have set (kubectl's credential plugin
// allowlist): an allowlist entry must name the command, as given or as found in $PATH.
func checkPolicy(ec *clientcmdapi.ExecConfig) error {
	switch ec.PluginPolicy.PolicyType {
	case "", clientcmdapi.PluginPolicyAllowAll:
		return nil
	case clientcmdapi.PluginPolicyDenyAll:
		return errors.New("is not allowed: the plugin policy denies all")
	case clientcmdapi.PluginPolicyAllowlist:
		resolved, _ := lookPath(ec.Command)
		for _, entry := range ec.PluginPolicy.Allowlist {
			if entry.Command == ec.Command {
				return nil
			}
			if r, err := lookPath(entry.Command); err == nil && r == resolved {
				return nil
			}
		}
		return errors.New("is not in the credential plugin allowlist")
	}
	return fmt.Errorf("has an unknown plugin policy %q", ec.PluginPolicy.PolicyType)
}

// Get returns the member's current credential, running the plugin when there is none or it
// expired. Callers that ask while a run is under way wait for it, each as long as ctx allows;
// the run itself goes on for the others, within Options.Timeout.
func (s *Source) Get(ctx context.Context) (*Credential, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, s.errorf(ErrClosed, "is no longer run: the member was disengaged or the provider stopped")
	}
	if c := s.current; c != nil && !c.expired(s.now()) {
		s.mu.Unlock()
		return c, nil
	}
	c := s.running
	if c == nil {
		c = &call{done: make(chan struct{})}
		s.running = c
		s.calls.Add(1)
		go s.do(c)
	}
	s.mu.Unlock()
	select {
	case <-c.done:
		return c.cred, c.err
	case <-ctx.Done():
		return nil, s.errorf(context.Cause(ctx), "has not answered yet")
	}
}

// do runs the plugin for c and publishes the outcome.
func (s *Source) do(c *call) {
	defer s.calls.Done()
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.Timeout)
	defer cancel()
	c.cred, c.err = s.run(ctx)
	s.mu.Lock()
	old := s.current
	s.running = nil
	if c.err == nil && !s.closed {
		s.current = c.cred
	}
	s.mu.Unlock()
	if c.err == nil && old != nil && old.Cert != nil && !membertransport.SameCertificate(old.Cert, c.cred.Cert) && s.transport != nil {
		// Open connections were made with the old certificate. A failure (the CA file became
		// unreadable) closed them all the same, and the next request reports it.
		_ = s.transport.Renew()
	}
	close(c.done)
}

// invalidate drops cred, which the member refused, unless a newer one replaced it already.
func (s *Source) invalidate(cred *Credential) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == cred {
		s.current = nil
	}
}

// Close kills the plugin's process group if a run is under way, waits for it to end and closes
// the connections made with the member's credentials. Later calls of Get fail with ErrClosed.
// Close is idempotent.
func (s *Source) Close() {
	s.mu.Lock()
	s.closed, s.current = true, nil
	s.mu.Unlock()
	s.cancel()
	s.stopAfter()
	s.calls.Wait()
	if s.transport != nil {
		s.transport.Close()
	}
}

// Command returns the base name of the plugin's command.
func (s *Source) Command() string { return s.command }

// errorf returns an error about the plugin of the member that wraps kind.
func (s *Source) errorf(kind error, format string, args ...any) error {
	return &Error{Member: s.opts.Member, Command: s.command, kind: kind, what: fmt.Sprintf(format, args...)}
}

// Error is a failure of a member's plugin.
type Error struct {
	// Member and Command name the member and the plugin's command (base name).
	Member, Command string
	kind            error
	what            string
}

func (e *Error) Error() string {
	member := ""
	if e.Member != "" {
		member = fmt.Sprintf(" of member %q", e.Member)
	}
	return fmt.Sprintf("exec credential plugin %q%s %s", e.Command, member, e.what)
}

func (e *Error) Unwrap() error { return e.kind }
