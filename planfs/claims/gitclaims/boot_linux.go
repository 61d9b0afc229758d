package gitclaims

import (
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// bootClock is seconds on CLOCK_BOOTTIME: monotonic, counts suspend, and
// lasts across one-shot runs until the machine reboots.
func bootClock() float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return float64(time.Now().UnixNano()) / 1e9 // not Linux: monotonic enough
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}

func bootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}
