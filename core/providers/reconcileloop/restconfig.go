package reconcileloop

import (
	"fmt"

	"k8s.io/client-go/rest"
)

// Defaults ApplyRESTOptions gives a member config that sets neither QPS nor Burst: the same as
// controller-runtime's config loader gives the host.
const (
	DefaultQPS   = 20
	DefaultBurst = 30
)

// ApplyRESTOptions finishes a member's rest.Config: it sets QPS and Burst to DefaultQPS and
// DefaultBurst when cfg sets neither, then applies opts in order, the provider's
// Options.RESTOptions. cfg is changed in place and returned. An error names the option as
// "Options.RESTOptions[i]".
func ApplyRESTOptions(cfg *rest.Config, opts []func(*rest.Config) error) (*rest.Config, error) {
	if cfg.QPS == 0 && cfg.Burst == 0 {
		cfg.QPS, cfg.Burst = DefaultQPS, DefaultBurst
	}
	for i, opt := range opts {
		if err := opt(cfg); err != nil {
			return nil, fmt.Errorf("Options.RESTOptions[%d]: %w", i, err)
		}
	}
	return cfg, nil
}
