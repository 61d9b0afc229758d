package sandbox

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// memTotal is the machine's memory (hw.memsize), 0 when unknown.
func memTotal() int64 {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0
	}
	return int64(n)
}

// Attach does nothing on macOS: there are no cgroups, so NewGroup never
// returns a Group to attach to.
func (g *Group) Attach(attr *syscall.SysProcAttr) {}

// mountOf finds no hierarchy on macOS, which NewGroup and SweepGroups
// take as the machine having no cgroup at all.
func mountOf(fstype, c string) (string, error) {
	return "", errors.New("macOS has no cgroups")
}
