package gitclaims

import (
	"time"

	"golang.org/x/sys/unix"
)

// bootClock is seconds on CLOCK_MONOTONIC, which on macOS (unlike Linux's)
// counts sleep as CLOCK_BOOTTIME does, and restarts at boot.
func bootClock() float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return float64(time.Now().UnixNano()) / 1e9
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}

// bootID is kern.bootsessionuuid, new at every boot, so that counts on
// the previous boot's clock are dropped as on Linux.
func bootID() string {
	id, _ := unix.Sysctl("kern.bootsessionuuid")
	return id
}
