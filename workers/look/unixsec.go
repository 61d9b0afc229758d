package look

import (
	"time"
)

// UnixSeconds is t as the claims backends record times: seconds since
// the epoch.
func UnixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}
