// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Calls counts, per object name, the calls of a hook the provider makes (a readiness predicate
// wrapped with Counted), so that a test knows when the provider has looked at an object again.
// The zero value is ready to use.
type Calls struct {
	mu    sync.Mutex
	count map[string]int
	types map[string]string
}

// Counted wraps hook so that every call counts in calls under the object's name.
func Counted[T client.Object](calls *Calls, hook func(context.Context, T) bool) func(context.Context, T) bool {
	return func(ctx context.Context, obj T) bool {
		calls.add(obj)
		return hook(ctx, obj)
	}
}

func (c *Calls) add(obj client.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.count == nil {
		c.count, c.types = map[string]int{}, map[string]string{}
	}
	c.count[obj.GetName()]++
	c.types[obj.GetName()] = fmt.Sprintf("%T", obj)
}

// Count is how many calls there were for name.
func (c *Calls) Count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count[name]
}

// TypeOf is the Go type of the object of the last call for name ("" before any).
func (c *Calls) TypeOf(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.types[name]
}

// WaitMore waits up to timeout until there were more than after calls for name.
func (c *Calls) WaitMore(t testing.TB, name string, after int, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, fmt.Sprintf("another call for %s", name), func() error {
		if n := c.Count(name); n <= after {
			return fmt.Errorf("%d calls, want more than %d", n, after)
		}
		return nil
	})
}
