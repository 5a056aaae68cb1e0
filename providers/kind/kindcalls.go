// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// concurrentReads bounds the kubeconfig reads that run at once: syncs run in parallel without a
// bound, and each read runs about eight container engine commands.
const concurrentReads = 4

// kindCalls makes the calls into the kind library, each bounded in time.
//
// The kind library runs the container engine's command line without a deadline and offers no
// way to pass one, so a wedged engine or container would block its caller forever. Each call
// therefore runs in a goroutine of its own and the caller waits at most Options.CommandTimeout
// for it. A call that did not answer in time is left to finish on its own; a later call with the
// same key joins it instead of starting another process, so a stuck cluster costs one process,
// not one per poll.
type kindCalls struct {
	options []kindcluster.ProviderOption
	timeout time.Duration
	// slots bounds the kubeconfig reads that run at once; each runs several engine commands.
	slots chan struct{}

	mu       sync.Mutex
	provider *kindcluster.Provider
	inflight map[string]*kindCall
	running  sync.WaitGroup
}

type kindCall struct {
	done chan struct{}
	val  any
	err  error
}

func newKindCalls(options []kindcluster.ProviderOption, timeout time.Duration, concurrency int) *kindCalls {
	return &kindCalls{
		options:  options,
		timeout:  timeout,
		slots:    make(chan struct{}, concurrency),
		inflight: map[string]*kindCall{},
	}
}

// errNoAnswer is returned (wrapped) when the kind library did not answer within the timeout.
var errNoAnswer = errors.New("no answer from the container engine")

// do runs fn under key, or joins the call of that key that is still running, and waits for it
// at most k.timeout and until ctx ends.
func (k *kindCalls) do(ctx context.Context, key string, fn func() (any, error)) (any, error) {
	k.mu.Lock()
	c, joined := k.inflight[key]
	if !joined {
		c = &kindCall{done: make(chan struct{})}
		k.inflight[key] = c
		k.running.Add(1)
		go func() {
			defer k.running.Done()
			c.val, c.err = fn()
			k.mu.Lock()
			delete(k.inflight, key)
			k.mu.Unlock()
			close(c.done)
		}()
	}
	k.mu.Unlock()

	timer := time.NewTimer(k.timeout)
	defer timer.Stop()
	select {
	case <-c.done:
		return c.val, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		return nil, fmt.Errorf("%w within %s (still waiting for it in the background)", errNoAnswer, k.timeout)
	}
}

// kind returns the kind library's provider, choosing the container engine on first use.
func (k *kindCalls) kind(ctx context.Context) (*kindcluster.Provider, error) {
	k.mu.Lock()
	p := k.provider
	k.mu.Unlock()
	if p != nil {
		return p, nil
	}
	// Detection runs the engines' command lines, so it is bounded like any other call.
	v, err := k.do(ctx, "detect", func() (any, error) {
		return kindcluster.NewProvider(k.options...), nil
	})
	if err != nil {
		return nil, fmt.Errorf("detecting the container engine: %w", err)
	}
	p = v.(*kindcluster.Provider)
	k.mu.Lock()
	if k.provider == nil {
		k.provider = p
	}
	p = k.provider
	k.mu.Unlock()
	return p, nil
}

// validName is the syntax of kind cluster names, as kind validates them at creation.
var validName = regexp.MustCompile(`^[a-z0-9.-]+$`)

// list returns the names of all kind clusters, sorted, and, apart, the entries of the list that
// are no kind cluster names, quoted. The list is the cluster label of every container, whoever
// made it: a container labeled with an empty name would otherwise be read as kind's default
// cluster "kind", and a name with "=" or "," would change the container engine's label filter.
func (k *kindCalls) list(ctx context.Context) (names, ignored []string, err error) {
	p, err := k.kind(ctx)
	if err != nil {
		return nil, nil, err
	}
	v, err := k.do(ctx, "list", func() (any, error) { return p.List() })
	if err != nil {
		return nil, nil, fmt.Errorf("listing kind clusters: %w", describe(err))
	}
	for _, name := range v.([]string) {
		if validName.MatchString(name) {
			names = append(names, name)
		} else {
			ignored = append(ignored, strconv.QuoteToASCII(name))
		}
	}
	slices.Sort(names)
	slices.Sort(ignored)
	return names, ignored, nil
}

// kubeconfig returns the kubeconfig of a kind cluster, for the host or, with internal, for the
// kind network.
func (k *kindCalls) kubeconfig(ctx context.Context, name string, internal bool) ([]byte, error) {
	p, err := k.kind(ctx)
	if err != nil {
		return nil, err
	}
	v, err := k.do(ctx, fmt.Sprintf("kubeconfig/%s/%t", name, internal), func() (any, error) {
		// Wait for a slot inside the call, so that joining callers do not take one. A call that
		// outlives the timeout gives its slot back: a wedged cluster must not hold one forever.
		select {
		case k.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		release := sync.OnceFunc(func() { <-k.slots })
		defer release()
		timer := time.AfterFunc(k.timeout, release)
		defer timer.Stop()
		return p.KubeConfig(name, internal)
	})
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig of kind cluster %q: %w", name, describe(withholdDecoderDetails(err)))
	}
	return []byte(v.(string)), nil
}

// errUnreadableAdminConf replaces the errors of kind's YAML decoder, which quote fragments of the
// document they fail on: here the node's admin.conf, whose values are credentials.
var errUnreadableAdminConf = errors.New("the control-plane node's admin.conf is not a kubeconfig kind can read (decoder details withheld as they may quote credentials)")

// withholdDecoderDetails returns errUnreadableAdminConf for an error of kind's YAML decoder, and
// err otherwise. kind returns the decoder's errors as they are ("yaml: unmarshal errors: ...
// cannot unmarshal !!str `c2VjcmV...`"); the container engine's errors are *kindexec.RunError.
func withholdDecoderDetails(err error) error {
	var run *kindexec.RunError
	if err == nil || errors.As(err, &run) || !strings.Contains(err.Error(), "yaml:") {
		return err
	}
	return errUnreadableAdminConf
}

// wait waits until no call runs any more, at most d.
func (k *kindCalls) wait(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		k.running.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// maxOutput bounds how much of a failed command's output goes into an error.
const maxOutput = 512

// describe adds the output of a failed engine command to err (kind's errors only name the
// command and its exit status), so that "is the engine running?" problems explain themselves.
// The output of `exec` is never included: it is what runs in a node, such as cat of the admin
// kubeconfig, and may hold credentials. The error's text is printable (see printable): it quotes
// what the engine printed and the container names it listed, which any container can choose, and
// it goes into log lines.
func describe(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var run *kindexec.RunError
	if errors.As(err, &run) && len(run.Command) >= 2 && !slices.Contains(run.Command, "exec") {
		if out := strings.TrimSpace(strings.ToValidUTF8(string(run.Output), "\uFFFD")); out != "" {
			if cut := truncate(out, maxOutput); cut != out {
				out = cut + "..."
			}
			msg += ": " + out
		}
	}
	return &engineError{msg: printable(msg), err: err}
}

// engineError is an error of the kind library, or of the container engine under it, with a
// printable message.
type engineError struct {
	msg string
	err error
}

func (e *engineError) Error() string { return e.msg }
func (e *engineError) Unwrap() error { return e.err }

// truncate returns the longest prefix of s of at most n bytes that ends at a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// printable returns s as valid UTF-8 on one line without control characters: line breaks and
// tabs become spaces, other control characters (terminal escape sequences among them) and
// invalid bytes U+FFFD.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case unicode.IsControl(r) || r == utf8.RuneError:
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// runtimeFromEnv mirrors the kind command line: $KIND_EXPERIMENTAL_PROVIDER picks the container
// engine when set to a value kind knows. It returns nil otherwise (auto-detection).
func runtimeFromEnv() kindcluster.ProviderOption {
	switch v := os.Getenv("KIND_EXPERIMENTAL_PROVIDER"); v {
	case "docker":
		return kindcluster.ProviderWithDocker()
	case "podman":
		return kindcluster.ProviderWithPodman()
	case "nerdctl", "finch", "nerdctl.lima":
		return kindcluster.ProviderWithNerdctl(v)
	}
	return nil
}
