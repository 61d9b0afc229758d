package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A process fleetwatch starts for an agent or a check runs in a cgroup of
// its own below the starter's, where the machine lets fleetwatch make one
// (root, or a delegated subtree): whatever it forks, setsid or double
// fork, stays inside (a contained process cannot write /sys/fs/cgroup to
// leave), one write ends all of it — also after the starter died with
// kill -9, by whoever takes its work over — a pause freezes all of it, and
// its processes and memory are bounded.
//
// cgroup v2 gives the group, its kill and its freeze; process and memory
// limits come from v2's pids and memory controllers where the v2
// hierarchy holds them, else from the v1 pids and memory hierarchies
// (hybrid machines mount v2 with no controller at all), and the freeze
// from v1's freezer when there is no v2 group.

// Group is one such cgroup, open for starting processes in it.
type Group struct {
	// Path is the v2 group, "" when there is none; the state file records
	// it, and KillGroup(Path) ends the run.
	Path string
	dir  *os.File
	// v1 are the run's folders in the v1 hierarchies that stand in for
	// controllers v2 lacks, by controller.
	v1     map[string]string
	limits Limits
	held   []string // what holds, for the faces: "kill", "freeze", "4096 processes", …
}

// Limits bound one run as a whole; 0 leaves that one unbounded.
type Limits struct {
	Procs  int64 // processes and threads
	Memory int64 // bytes
}

// DefaultLimits are 4,096 processes and a quarter of the machine's memory.
func DefaultLimits() Limits {
	return Limits{Procs: 4096, Memory: memTotal() / 4}
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

// v1Controllers are the v1 hierarchies a run may use, each only where v2
// does not hold its controller.
var v1Controllers = []string{"pids", "memory", "freezer"}

// NewGroup makes (or empties and reuses) the cgroup name below this
// process's own, bounded by lim; an error says why there is none at all
// (no cgroup hierarchy this process may make groups in), and the caller
// goes on without. Held says what the group does.
func NewGroup(name string, lim Limits) (*Group, error) {
	if !strings.HasPrefix(name, groupPrefix) || strings.ContainsRune(name, '/') {
		return nil, fmt.Errorf("cgroup %q: not a fleetwatch group name", name)
	}
	g := &Group{v1: map[string]string{}, limits: lim}
	v2err := g.makeV2(name)
	v2has := g.v2Controllers()
	for _, c := range v1Controllers {
		if slices.Contains(v2has, c) || c == "freezer" && g.Path != "" {
			continue
		}
		if p, err := makeV1(c, name); err == nil {
			g.v1[c] = p
		}
	}
	if g.Path == "" && len(g.v1) == 0 {
		return nil, v2err
	}
	if err := g.setLimits(v2has); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// makeV2 makes the v2 group name below ours.
func (g *Group) makeV2(name string) error {
	own, err := ownGroup()
	if err != nil {
		return err
	}
	// Starting a process in the new group moves it from ours: both
	// cgroup.procs must be ours to write.
	if err := unix.Access(filepath.Join(own, "cgroup.procs"), unix.W_OK); err != nil {
		return fmt.Errorf("cgroup %s: %v", own, err)
	}
	// Where we may, the controllers our group has are handed down.
	if data, err := os.ReadFile(filepath.Join(own, "cgroup.controllers")); err == nil {
		for _, c := range strings.Fields(string(data)) {
			if c == "pids" || c == "memory" {
				_ = os.WriteFile(filepath.Join(own, "cgroup.subtree_control"), []byte("+"+c), 0)
			}
		}
	}
	p := filepath.Join(own, name)
	if _, err := os.Stat(p); err == nil {
		// A group left by a starter that died: what runs there goes first.
		if err := KillGroup(p); err != nil {
			return err
		}
	} else if err := os.Mkdir(p, 0o755); err != nil {
		return fmt.Errorf("cgroup %s: %v", p, err)
	}
	if _, err := os.Stat(filepath.Join(p, "cgroup.kill")); err != nil {
		os.Remove(p)
		return fmt.Errorf("cgroup %s: no cgroup.kill (Linux 5.14+)", p)
	}
	dir, err := os.Open(p)
	if err != nil {
		os.Remove(p)
		return err
	}
	g.Path, g.dir = p, dir
	g.held = append(g.held, "kill", "freeze")
	return nil
}

// v2Controllers are the controllers the v2 group has.
func (g *Group) v2Controllers() []string {
	if g.Path == "" {
		return nil
	}
	data, _ := os.ReadFile(filepath.Join(g.Path, "cgroup.controllers"))
	return strings.Fields(string(data))
}

// setLimits writes g's limits where a controller holds them.
func (g *Group) setLimits(v2has []string) error {
	if n := g.limits.Procs; n > 0 {
		if err := g.limit(v2has, "pids", "pids.max", "pids.max", n, fmt.Sprintf("%d processes", n)); err != nil {
			return err
		}
	}
	if n := g.limits.Memory; n > 0 {
		mem := fmt.Sprintf("%.1f GiB of memory", float64(n)/(1<<30))
		if err := g.limit(v2has, "memory", "memory.max", "memory.limit_in_bytes", n, mem); err != nil {
			return err
		}
	}
	if g.Path == "" && g.v1["freezer"] != "" {
		g.held = append(g.held, "freeze")
	}
	return nil
}

// limit writes v to controller's file, v2file in g's own group when cgroup
// v2 has the controller there (v2has), else v1file in its v1 hierarchy,
// and notes what it holds; where neither has it, nothing holds it.
func (g *Group) limit(v2has []string, controller, v2file, v1file string, v int64, what string) error {
	dir, file := g.Path, v2file
	switch {
	case slices.Contains(v2has, controller):
	case g.v1[controller] != "":
		dir, file = g.v1[controller], v1file
	default:
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(strconv.FormatInt(v, 10)), 0); err != nil {
		return fmt.Errorf("cgroup %s: %s: %v", dir, file, err)
	}
	g.held = append(g.held, what)
	return nil
}

// Held says what g does, in a few words: "kill, freeze, 4096 processes,
// 6.0 GiB of memory".
func (g *Group) Held() string {
	if g == nil {
		return ""
	}
	return strings.Join(g.held, ", ")
}

// Unbounded names the limits of g that cannot hold on this machine (no
// pids or memory controller it may use), "" when all do.
func (g *Group) Unbounded() string {
	var out []string
	has := func(suffix string) bool {
		return slices.ContainsFunc(g.held, func(s string) bool { return strings.HasSuffix(s, suffix) })
	}
	if g.limits.Procs > 0 && !has(" processes") {
		out = append(out, "no process limit")
	}
	if g.limits.Memory > 0 && !has(" of memory") {
		out = append(out, "no memory limit")
	}
	if !has("freeze") {
		out = append(out, "no freeze (a pause stops its process group only)")
	}
	return strings.Join(out, ", ")
}

// Bounded reports whether both of g's limits hold.
func (g *Group) Bounded() bool { return g != nil && g.Unbounded() == "" }

// joinV1 moves thread tid into g's v1 groups, so what it forks starts
// there; leaveV1 moves it back to ours.
func (g *Group) joinV1(tid int) error {
	if g == nil {
		return nil
	}
	for c, dir := range g.v1 {
		if err := os.WriteFile(filepath.Join(dir, "tasks"), []byte(strconv.Itoa(tid)), 0); err != nil {
			return fmt.Errorf("cgroup %s (%s): %v", dir, c, err)
		}
	}
	return nil
}

func (g *Group) leaveV1(tid int) {
	if g == nil {
		return
	}
	for _, dir := range g.v1 {
		_ = os.WriteFile(filepath.Join(filepath.Dir(dir), "tasks"), []byte(strconv.Itoa(tid)), 0)
	}
}

// Freeze stops every process of g where it is (and Thaw lets them go on):
// a SIGCONT from one of them cannot wake another, as it can a stopped
// process group. It waits, a second at most, until the kernel says so.
func (g *Group) Freeze() error { return g.freeze(true) }

// Thaw undoes Freeze.
func (g *Group) Thaw() error { return g.freeze(false) }

func (g *Group) freeze(on bool) error {
	if g == nil {
		return errors.New("no cgroup")
	}
	file, val, want, state := "cgroup.freeze", "0", "frozen 0", "cgroup.events"
	dir := g.Path
	if on {
		val, want = "1", "frozen 1"
	}
	if dir == "" {
		dir = g.v1["freezer"]
		file, val, want, state = "freezer.state", "THAWED", "THAWED", "freezer.state"
		if on {
			val, want = "FROZEN", "FROZEN"
		}
	}
	if dir == "" {
		return errors.New("no freezer")
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(val), 0); err != nil {
		return fmt.Errorf("cgroup %s: %v", dir, err)
	}
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if data, _ := os.ReadFile(filepath.Join(dir, state)); strings.Contains(string(data), want) {
			return nil
		}
	}
	return fmt.Errorf("cgroup %s: not %s after a second", dir, want)
}

// Close kills what is left in g, and removes it.
func (g *Group) Close() error {
	if g == nil {
		return nil
	}
	var errs []error
	if g.Path != "" {
		defer g.dir.Close()
		errs = append(errs, RemoveGroup(g.Path))
	}
	for _, dir := range g.v1 {
		errs = append(errs, RemoveGroup(dir))
	}
	return errors.Join(errs...)
}

// KillGroup kills every process in the fleetwatch cgroup at path (v2, or a
// v1 hierarchy's) and waits, a few seconds at most, until it is empty. A
// path that is gone is no error; one that is not a fleetwatch group is
// refused.
func KillGroup(path string) error {
	if !strings.HasPrefix(filepath.Base(path), groupPrefix) {
		return fmt.Errorf("cgroup %s: not one of fleetwatch's", path)
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	v2 := true
	if err := os.WriteFile(filepath.Join(path, "cgroup.kill"), []byte("1"), 0); err != nil {
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, os.ErrPermission) {
			return fmt.Errorf("cgroup %s: %v", path, err)
		}
		v2 = false
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !v2 {
			// v1 has no kill: each process, until none is left (one
			// forked meanwhile is in the next read); a frozen v1 task
			// dies only once thawed.
			killEach(path)
			_ = os.WriteFile(filepath.Join(path, "freezer.state"), []byte("THAWED"), 0)
		}
		if groupEmpty(path) {
			return nil
		}
	}
	return fmt.Errorf("cgroup %s: still populated after being killed", path)
}

// killEach sends SIGKILL to every process cgroup.procs lists, never this
// one.
func killEach(path string) {
	data, _ := os.ReadFile(filepath.Join(path, "cgroup.procs"))
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 && pid != os.Getpid() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
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

// SweepGroups removes the empty fleetwatch cgroups (v2 and v1) below this
// process's own whose name starts with prefix and that are older than
// age: those a starter killed with kill -9 left behind, when their names
// are never used again (a check's). A young empty one may be about to be
// used.
func SweepGroups(prefix string, age time.Duration) {
	if !strings.HasPrefix(prefix, groupPrefix) {
		return
	}
	var parents []string
	if own, err := ownGroup(); err == nil {
		parents = append(parents, own)
	}
	for _, c := range v1Controllers {
		if own, err := ownV1(c); err == nil {
			parents = append(parents, own)
		}
	}
	for _, own := range parents {
		sweepBelow(own, prefix, age)
	}
}

// sweepBelow removes the empty groups in own whose name starts with
// prefix and that are older than age.
func sweepBelow(own, prefix string, age time.Duration) {
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

// groupEmpty reads cgroup.events' "populated 0" (v2), or an empty
// cgroup.procs (v1).
func groupEmpty(path string) bool {
	data, err := os.ReadFile(filepath.Join(path, "cgroup.events"))
	if errors.Is(err, os.ErrNotExist) {
		procs, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		return errors.Is(err, os.ErrNotExist) || err == nil && len(strings.TrimSpace(string(procs))) == 0
	}
	return err == nil && strings.Contains(string(data), "populated 0")
}

// ownGroup is this process's cgroup v2 folder.
func ownGroup() (string, error) {
	mount, err := mountOf("cgroup2", "")
	if err != nil {
		return "", err
	}
	rest, ok := cgroupLine("")
	if !ok {
		return "", errors.New("no cgroup v2 for this process")
	}
	return filepath.Join(mount, filepath.Clean("/"+rest)), nil
}

// ownV1 is this process's folder in the v1 hierarchy of controller c.
func ownV1(c string) (string, error) {
	mount, err := mountOf("cgroup", c)
	if err != nil {
		return "", err
	}
	rest, ok := cgroupLine(c)
	if !ok {
		return "", fmt.Errorf("no cgroup v1 %s for this process", c)
	}
	return filepath.Join(mount, filepath.Clean("/"+rest)), nil
}

// makeV1 makes (or empties and reuses) the group name in c's v1
// hierarchy, below ours.
func makeV1(c, name string) (string, error) {
	own, err := ownV1(c)
	if err != nil {
		return "", err
	}
	p := filepath.Join(own, name)
	if _, err := os.Stat(p); err == nil {
		if err := KillGroup(p); err != nil {
			return "", err
		}
	} else if err := os.Mkdir(p, 0o755); err != nil {
		return "", fmt.Errorf("cgroup %s: %v", p, err)
	}
	if err := unix.Access(filepath.Join(p, "tasks"), unix.W_OK); err != nil {
		os.Remove(p)
		return "", fmt.Errorf("cgroup %s: %v", p, err)
	}
	return p, nil
}

// cgroupLine is this process's path in the hierarchy of controller c
// ("" for v2) as /proc/self/cgroup says.
func cgroupLine(c string) (string, bool) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if c == "" && parts[0] == "0" && parts[1] == "" {
			return parts[2], true
		}
		if c != "" && slices.Contains(strings.Split(parts[1], ","), c) {
			return parts[2], true
		}
	}
	return "", false
}
