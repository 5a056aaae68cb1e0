package reconcileloop

import (
	"time"

	"mcr.dev/core/clusters"
)

// Durations points at the durations of a provider's Options that the pieces of this package
// use, so that every provider defaults them alike. A nil pointer is left alone.
type Durations struct {
	// CacheSyncTimeout defaults to clusters.DefaultCacheSyncTimeout (one minute).
	CacheSyncTimeout *time.Duration

	// RetryMinDelay and RetryMaxDelay default to DefaultRetryMinDelay (1s) and
	// DefaultRetryMaxDelay (5m); a RetryMaxDelay below RetryMinDelay is raised to it.
	RetryMinDelay *time.Duration
	RetryMaxDelay *time.Duration

	// ResyncPeriod defaults to DefaultResyncPeriod (10m).
	ResyncPeriod *time.Duration
}

// SetDefaults sets each duration that is zero or negative to its default.
func (d Durations) SetDefaults() {
	setDefault(d.CacheSyncTimeout, clusters.DefaultCacheSyncTimeout)
	setDefault(d.RetryMinDelay, DefaultRetryMinDelay)
	setDefault(d.RetryMaxDelay, DefaultRetryMaxDelay)
	if d.RetryMinDelay != nil && d.RetryMaxDelay != nil && *d.RetryMaxDelay < *d.RetryMinDelay {
		*d.RetryMaxDelay = *d.RetryMinDelay
	}
	setDefault(d.ResyncPeriod, DefaultResyncPeriod)
}

func setDefault(d *time.Duration, def time.Duration) {
	if d != nil && *d <= 0 {
		*d = def
	}
}
