// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/redact"
)

// NewHost builds the host cluster of a provider that runs its own (a New, as opposed to a
// NewForHost that shares one the caller runs). Its scheme holds client-go's types and those
// types adds (the provider's API types; nil when client-go's are all it reads). own, the
// provider's settings (a cache restricted to what it watches), applies next, then the user's
// extra options (the provider's HostClusterOptions); the host's logger is logger named "host".
// name is the provider's name, e.g. "clusterapi-provider", for errors. Pass the host as
// EngineOptions.Host: the provider built it, so Start runs it (EngineOptions.RunHost is implied),
// and a New and a NewForHost can share the rest of their construction.
func NewHost(name string, cfg *rest.Config, logger logr.Logger, types runtime.SchemeBuilder, own func(*cluster.Options), extra ...cluster.Option) (cluster.Cluster, error) {
	prefix := strings.ReplaceAll(name, "-", " ")
	if cfg == nil {
		return nil, errors.New(prefix + ": host config is nil")
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("%s: %w", prefix, err)
	}
	if err := types.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("%s: %w", prefix, err)
	}
	opts := append([]cluster.Option{func(o *cluster.Options) {
		o.Scheme = scheme
		o.Logger = logger.WithName("host")
		if own != nil {
			own(o)
		}
	}}, extra...)
	host, err := cluster.New(cfg, opts...)
	if err != nil {
		return nil, redact.Error(fmt.Errorf("%s: creating the host cluster: %w", prefix, err))
	}
	return &builtHost{host}, nil
}

// builtHost marks a host NewHost built, which the Engine runs.
type builtHost struct{ cluster.Cluster }

// CacheNamespaces returns the cache.Options.DefaultNamespaces that hold exactly namespaces, for a
// provider whose Options.Namespaces restrict what it watches; nil (every namespace) when there
// are none.
func CacheNamespaces(namespaces []string) map[string]cache.Config {
	if len(namespaces) == 0 {
		return nil
	}
	out := make(map[string]cache.Config, len(namespaces))
	for _, ns := range namespaces {
		out[ns] = cache.Config{}
	}
	return out
}
