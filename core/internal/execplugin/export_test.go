// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package execplugin

import "time"

// SetClock makes s read the time from now, for the external tests of expiry.
func SetClock(s *Source, now func() time.Time) { s.now = now }
