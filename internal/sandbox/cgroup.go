package sandbox

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A process fleetwatch starts for an agent or a check runs, where cgroup v2
// lets fleetwatch make groups (root, or a delegated subtree), in a cgroup
// of its own below the starter's: whatever it forks, setsid or double fork,
// stays inside (a contained process cannot write /sys/fs/cgroup to leave),
// and one write to cgroup.kill ends all of it — also after the starter died
// with kill -9, by whoever takes its work over.

// Group is one such cgroup, open for starting processes in it.
type Group struct {
	Path string
	dir  *os.File
}

// groupPrefix starts every cgroup fleetwatch makes; KillGroup refuses any
// other, so a state file cannot make it kill an unrelated group.
const groupPrefix = "fleetwatch-"

// GroupName is the cgroup name for who (an agent id, a check) in project:
// the same every time, distinct between projects.
func GroupName(project, who string) string {
	h := sha256.Sum256([]byte(project))
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, who)
	if len(clean) > 64 {
		clean = clean[:64]
	}
	return groupPrefix + hex.EncodeToString(h[:4]) + "-" + strings.TrimLeft(clean, ".")
}

// NewGroup makes (or empties and reuses) the cgroup name below this
// process's own; an error says why there is none (no cgroup v2, no right
// to make groups there), and the caller goes on without.
func NewGroup(name string) (*Group, error) {
	if !strings.HasPrefix(name, groupPrefix) || strings.ContainsRune(name, '/') {
		return nil, fmt.Errorf("cgroup %q: not a fleetwatch group name", name)
	}
	own, err := ownGroup()
	if err != nil {
		return nil, err
	}
	// Starting a process in the new group moves it from ours: both
	// cgroup.procs must be ours to write.
	if err := unix.Access(filepath.Join(own, "cgroup.procs"), unix.W_OK); err != nil {
		return nil, fmt.Errorf("cgroup %s: %v", own, err)
	}
	p := filepath.Join(own, name)
	if _, err := os.Stat(p); err == nil {
		// A group left by a starter that died: what runs there goes first.
		if err := KillGroup(p); err != nil {
			return nil, err
		}
	} else if err := os.Mkdir(p, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup %s: %v", p, err)
	}
	if _, err := os.Stat(filepath.Join(p, "cgroup.kill")); err != nil {
		os.Remove(p)
		return nil, fmt.Errorf("cgroup %s: no cgroup.kill (Linux 5.14+)", p)
	}
	dir, err := os.Open(p)
	if err != nil {
		os.Remove(p)
		return nil, err
	}
	return &Group{Path: p, dir: dir}, nil
}

// Attach makes the process attr starts begin its life in g.
func (g *Group) Attach(attr *syscall.SysProcAttr) {
	attr.UseCgroupFD, attr.CgroupFD = true, int(g.dir.Fd())
}

// Close kills what is left in g, and removes it.
func (g *Group) Close() error {
	if g == nil {
		return nil
	}
	defer g.dir.Close()
	if err := KillGroup(g.Path); err != nil {
		return err
	}
	return os.Remove(g.Path)
}

// KillGroup kills every process in the fleetwatch cgroup at path and
// waits, a few seconds at most, until it is empty. A path that is gone is
// no error; one that is not a fleetwatch group is refused.
func KillGroup(path string) error {
	if !strings.HasPrefix(filepath.Base(path), groupPrefix) {
		return fmt.Errorf("cgroup %s: not one of fleetwatch's", path)
	}
	if err := os.WriteFile(filepath.Join(path, "cgroup.kill"), []byte("1"), 0); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("cgroup %s: %v", path, err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if groupEmpty(path) {
			return nil
		}
	}
	return fmt.Errorf("cgroup %s: still populated after cgroup.kill", path)
}

// RemoveGroup kills what is in the group at path and removes it.
func RemoveGroup(path string) error {
	if err := KillGroup(path); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// SweepGroups removes the empty fleetwatch cgroups below this process's
// own whose name starts with prefix and that are older than age: those a
// starter killed with kill -9 left behind, when their names are never
// used again (a check's). A young empty one may be about to be used.
func SweepGroups(prefix string, age time.Duration) {
	own, err := ownGroup()
	if err != nil || !strings.HasPrefix(prefix, groupPrefix) {
		return
	}
	entries, _ := os.ReadDir(own)
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		p := filepath.Join(own, e.Name())
		if fi, err := os.Stat(p); err == nil && time.Since(fi.ModTime()) > age && groupEmpty(p) {
			os.Remove(p)
		}
	}
}

// groupEmpty reads cgroup.events' "populated 0".
func groupEmpty(path string) bool {
	data, err := os.ReadFile(filepath.Join(path, "cgroup.events"))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	return strings.Contains(string(data), "populated 0")
}

// ownGroup is this process's cgroup v2 folder.
func ownGroup() (string, error) {
	mount, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			return filepath.Join(mount, filepath.Clean("/"+rest)), nil
		}
	}
	return "", errors.New("no cgroup v2 for this process")
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted.
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID parent major:minor root mountpoint options ... - fstype source opts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if f := strings.Fields(pre); len(f) >= 5 {
			var st unix.Statfs_t
			if unix.Statfs(f[4], &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
				return f[4], nil
			}
		}
	}
	return "", errors.New("no cgroup v2 hierarchy mounted")
}
