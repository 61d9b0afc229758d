package sandbox

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

func memTotal() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// Attach makes the process attr starts begin its life in g's v2 group.
func (g *Group) Attach(attr *syscall.SysProcAttr) {
	if g == nil || g.dir == nil {
		return
	}
	attr.UseCgroupFD, attr.CgroupFD = true, int(g.dir.Fd())
}

var mounts = sync.OnceValue(func() []string {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	return strings.Split(string(data), "\n")
})

// mountOf is where the hierarchy of fstype (cgroup2, or cgroup for v1
// controller c) is mounted.
func mountOf(fstype, c string) (string, error) {
	for _, line := range mounts() {
		// ID parent major:minor root mountpoint options ... - fstype source opts
		pre, post, ok := strings.Cut(line, " - ")
		if !ok || !strings.HasPrefix(post, fstype+" ") {
			continue
		}
		f, pf := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(pf) < 3 {
			continue
		}
		if c != "" && !slices.Contains(strings.Split(pf[2], ","), c) {
			continue
		}
		var st unix.Statfs_t
		magic := int64(unix.CGROUP2_SUPER_MAGIC)
		if c != "" {
			magic = unix.CGROUP_SUPER_MAGIC
		}
		if unix.Statfs(f[4], &st) == nil && st.Type == magic {
			return f[4], nil
		}
	}
	if c != "" {
		return "", fmt.Errorf("no cgroup v1 %s hierarchy mounted", c)
	}
	return "", errors.New("no cgroup v2 hierarchy mounted")
}
