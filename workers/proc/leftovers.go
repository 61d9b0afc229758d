package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/contain"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// No agent process outlives its driver for long, and no run's work is
// lost with it. While the agent runs, the driver records in its state file
// the agent's cgroup, its process group (and session, when it has one of
// its own) and the daemons it adopted, each with its start time. A driver
// killed with kill -9 cannot stop them; whoever notices first — the
// driver's supervisor (Supervise), the agent id's next driver, a recover,
// a hand-off of the plan's branch — stops them (StopLeftovers) and brings
// the run's commits in from the agent's own store (bringLeftover). A pid is
// signalled only when its start time still matches, so a reused pid is
// never hit; a group is signalled only while its leader is the recorded
// process or gone (a live member keeps the group's number from reuse).

// ProcOf is pid as it runs now; zero when it does not.
func ProcOf(pid int) look.Proc {
	st, ok := ReadStat(pid)
	if !ok || st.state == 'Z' {
		return look.Proc{}
	}
	return look.Proc{PID: pid, Start: st.start}
}

// sameProc reports whether p is still the process it was.
func sameProc(p look.Proc) bool {
	if p.PID <= 0 {
		return false
	}
	now := ProcOf(p.PID)
	return now.PID != 0 && now.Start == p.Start
}

// ContainsProc reports whether ps holds p.
func ContainsProc(ps []look.Proc, p look.Proc) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// leftoverWait bounds how long StopLeftovers waits for what it killed to go.
const leftoverWait = 5 * time.Second

// StopLeftovers kills, on this host, what agentID's last driver left
// running when it died: its agent's cgroup, process group and session, and
// the daemons it had adopted; then it brings the commits the dead run left
// in the agent's own store into the plan's branch (bringLeftover). It
// does nothing while a driver for agentID runs (that driver owns its
// agent). It returns how many groups and processes it signalled, once
// they are gone or leftoverWait has passed.
func StopLeftovers(project, agentID string) (int, error) {
	if DriverRunning(project, agentID) {
		return 0, nil
	}
	n, err := KillLeftovers(project, agentID)
	if err != nil {
		return n, err
	}
	bringLeftoverLogged(project, agentID)
	return n, nil
}

// bringLeftoverLogged is bringLeftover for whoever notices a dead driver
// but the agent id's next one: what it did goes to the agent's log. A
// store it cannot bring from never stops a plan from changing hands.
func bringLeftoverLogged(project, agentID string) {
	tip, err := BringLeftover(project, agentID)
	if tip == "" && err == nil {
		return
	}
	log, lerr := look.OpenLog(project, agentID, nil)
	if lerr != nil {
		return
	}
	defer log.Close()
	if err != nil {
		log.Printf("could not bring in the commits the last driver's run left: %v", err)
		return
	}
	log.Printf("brought the commits the last driver's run left to %.12s", tip)
}

// Recover takes over rel's expired or unreadable lease as a, after
// stopping whatever its holder's dead driver left running on this host
// and bringing in what that run committed: the plan never changes hands
// while the last agent's processes still work on it, nor without its work.
func Recover(t *planfs.Tree, rel string, a planfs.Actor, ttl float64) (*model.Lease, error) {
	if l := t.ReadLease(rel); l != nil && l.AgentID != "" && l.AgentID != a.AgentID {
		if _, err := StopLeftovers(t.Project, l.AgentID); err != nil {
			return nil, fmt.Errorf("cannot stop what %s's driver left running: %v", l.AgentID, err)
		}
	}
	return t.Recover(rel, a, ttl)
}

// leftState is agentID's state file when a driver on this host wrote it.
func leftState(project, agentID string) (look.State, bool, error) {
	data, err := look.ReadStateFile(look.StatePath(project, agentID))
	if errors.Is(err, os.ErrNotExist) {
		return look.State{}, false, nil
	}
	if err != nil {
		return look.State{}, false, err
	}
	var st look.State
	if err := json.Unmarshal(data, &st); err != nil || st.Host != look.Hostname() {
		return look.State{}, false, nil // unreadable, or another machine's pids
	}
	return st, true, nil
}

// KillLeftovers is StopLeftovers' kill for a caller that knows no driver
// runs for agentID (it holds the agent's lock itself).
func KillLeftovers(project, agentID string) (int, error) {
	st, ok, err := leftState(project, agentID)
	if !ok {
		return 0, err
	}
	return killRun(st)
}

// runOf is what of st's run may still be signalled: its process group and
// session (their numbers cannot be reused while any member lives; a leader
// with another start time means they are gone) and the daemons it adopted
// that still are who they were.
func runOf(st look.State) (groups, sessions, procs []int) {
	if a := st.Agent; a != nil && a.PID > 1 && (sameProc(*a) || ProcOf(a.PID).PID == 0) {
		groups = append(groups, a.PID)
		if st.Session == a.PID {
			sessions = append(sessions, a.PID)
		}
	}
	for _, p := range st.Adopted {
		if p.PID > 1 && sameProc(p) {
			procs = append(procs, p.PID)
		}
	}
	return groups, sessions, procs
}

// killRun kills everything st's run left: its cgroup first (all the agent
// forked is in it, however it left its group and session), then its
// group, session and adopted daemons; it waits leftoverWait at most for
// them to go.
func killRun(st look.State) (int, error) {
	n := 0
	if _, err := os.Stat(st.Cgroup); st.Cgroup != "" && err == nil {
		if err := sandbox.RemoveGroup(st.Cgroup); err != nil {
			return 0, err
		}
		n++
	}
	groups, sessions, procs := runOf(st)
	n += signalRun(groups, sessions, procs, syscall.SIGKILL)
	deadline := time.Now().Add(leftoverWait)
	for time.Now().Before(deadline) && alive(groups, sessions, procs) {
		time.Sleep(20 * time.Millisecond)
	}
	return n, nil
}

// signalRun sends sig to each group, each session's members and each of
// procs, and counts those it reached.
func signalRun(groups, sessions, procs []int, sig syscall.Signal) int {
	n := 0
	for _, g := range groups {
		if syscall.Kill(-g, sig) == nil {
			n++
		}
	}
	for _, pid := range inSessions(sessions) {
		if syscall.Kill(pid, sig) == nil {
			n++
		}
	}
	for _, pid := range procs {
		if syscall.Kill(pid, sig) == nil {
			n++
		}
	}
	return n
}

// alive reports whether any of groups (by number), sessions or procs still
// runs; a zombie (waiting for a parent that is not us) does not count.
func alive(groups, sessions, procs []int) bool {
	for _, g := range groups {
		if syscall.Kill(-g, 0) == nil && groupRuns(g) {
			return true
		}
	}
	if len(inSessions(sessions)) > 0 {
		return true
	}
	for _, pid := range procs {
		if ProcOf(pid).PID != 0 {
			return true
		}
	}
	return false
}

// groupRuns reports whether a process of group g is running (not a zombie).
func groupRuns(g int) bool {
	for _, pid := range allPIDs() {
		if st, ok := ReadStat(pid); ok && st.pgid == g && st.state != 'Z' {
			return true
		}
	}
	return false
}

// inSessions lists the running processes (not zombies) of sessions.
func inSessions(sessions []int) []int {
	if len(sessions) == 0 {
		return nil
	}
	var out []int
	for _, pid := range allPIDs() {
		if st, ok := ReadStat(pid); ok && st.state != 'Z' && slices.Contains(sessions, st.Sid) {
			out = append(out, pid)
		}
	}
	return out
}

// allPIDs lists the processes in /proc.
func allPIDs() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// storeRefsRegular refuses a store whose ref or packed-refs is not a
// regular file.
func storeRefsRegular(store, ref, agentID string) error {
	for _, p := range []string{filepath.Join(store, filepath.FromSlash(ref)), filepath.Join(store, "packed-refs")} {
		if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
			return fmt.Errorf("%s in %s's store is not a regular file", filepath.Base(p), agentID)
		}
	}
	return nil
}

// BringLeftover brings what agentID's dead driver's run committed in the
// agent's own store into the plan's branch, as its state file names them
// (the driver writes it; the agent cannot): the work of a run whose
// driver died reaches the project before the plan changes hands. Only
// while the run's worktree still has the branch checked out: after a
// hand-off the branch is another agent's. It returns the tip brought, ""
// when there was nothing to bring.
func BringLeftover(project, agentID string) (string, error) {
	st, ok, err := leftState(project, agentID)
	if !ok || st.State != look.StateRunning || st.Plan == "" || st.Worktree == "" {
		return "", err
	}
	ref := "refs/heads/" + tree.FeatureBranch(model.SlugOf(path.Base(st.Plan)))
	store := filepath.Join(project, filepath.FromSlash(contain.SandboxDir), tree.SafeID(agentID), "git")
	admin, err := gitenv.WorktreeAdmin(st.Worktree)
	if err != nil || !contain.CheckedOutIn(admin, ref) || !tree.IsFolder(store) {
		return "", nil
	}
	// The run is stopped, so what its agent made of its store stays as it
	// is: a ref that is no regular file (a FIFO would hold this reader
	// for good) is refused before git or the driver opens it.
	if err := storeRefsRegular(store, ref, agentID); err != nil {
		return "", err
	}
	g := &contain.GitBox{Project: project, Common: filepath.Dir(filepath.Dir(admin)), Admin: admin, Wt: st.Worktree, Store: store, Ref: ref}
	tip, err := g.Bring(agentID)
	if err != nil || tip == "" {
		return "", err
	}
	// The worktree's index follows its branch, as closeBox leaves it.
	if err := g.Settle(); err != nil {
		return tip, fmt.Errorf("%s: %v", st.Worktree, err)
	}
	return tip, nil
}
