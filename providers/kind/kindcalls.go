package kind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

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

// list returns the names of all kind clusters, sorted.
func (k *kindCalls) list(ctx context.Context) ([]string, error) {
	p, err := k.kind(ctx)
	if err != nil {
		return nil, err
	}
	v, err := k.do(ctx, "list", func() (any, error) { return p.List() })
	if err != nil {
		return nil, fmt.Errorf("listing kind clusters: %w", describe(err))
	}
	names := slices.Clone(v.([]string))
	slices.Sort(names)
	return names, nil
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
		return nil, fmt.Errorf("reading the kubeconfig of kind cluster %q: %w", name, describe(err))
	}
	return []byte(v.(string)), nil
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
// kubeconfig, and may hold credentials.
func describe(err error) error {
	var run *kindexec.RunError
	if !errors.As(err, &run) || len(run.Command) < 2 || slices.Contains(run.Command, "exec") {
		return err
	}
	out := bytes.TrimSpace(run.Output)
	if len(out) == 0 {
		return err
	}
	msg := string(out)
	if len(msg) > maxOutput {
		msg = msg[:maxOutput] + "..."
	}
	return fmt.Errorf("%w: %s", err, strings.ReplaceAll(msg, "\n", " "))
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
