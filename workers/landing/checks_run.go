package landing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/workers/seat"
)

// checkGrace is how long a check gets between SIGTERM and SIGKILL.
var checkGrace = 5 * time.Second

// Log size: the head of the output up to logHead, then the last logTail
// bytes, where runners print their summary.
const (
	logHead = 15 << 20
	logTail = 1 << 20
)

// checkWorktree is a throwaway detached worktree whose directory its
// runner holds flocked while it exists.
type checkWorktree struct {
	project, path string
	lock          *os.File
}

// addCheckWorktree makes a detached worktree of commit under
// var/fleet/checks/wt/. Its folder is made and locked under the lock
// cleaners judge folders by, so a cleaner never finds it unlocked while its
// runner lives.
func addCheckWorktree(project, commit, name string) (*checkWorktree, error) {
	rel := checksRel + "/wt/" + name + "-" + randomSuffix()
	unlock, err := lockWorktrees(project)
	if err != nil {
		return nil, err
	}
	d, err := safepath.OpenDir(project, rel, true)
	if err != nil {
		unlock()
		return nil, err
	}
	if err := unix.Flock(int(d.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unlock()
		d.Close()
		return nil, err
	}
	wt := &checkWorktree{project: project, path: filepath.Join(project, filepath.FromSlash(rel)), lock: d}
	_, err = git(project, "worktree", "add", "--detach", "--quiet", wt.path, commit)
	unlock()
	if err != nil {
		wt.remove()
		return nil, fmt.Errorf("cannot make a worktree of %s: %v", commit, err)
	}
	return wt, nil
}

// remove deletes the worktree and its registration, then lets its folder
// go.
func (w *checkWorktree) remove() {
	dropCheckWorktree(w.project, w.path)
	w.lock.Close()
}

// dropCheckWorktree removes the worktree at path whatever state it is in.
// Only a worktree git cannot remove (half made by a killed runner) costs a
// prune, under the lock that keeps it from racing our own adds: a prune
// can take the registration of an add in progress.
func dropCheckWorktree(project, path string) {
	unlock, err := lockWorktrees(project)
	if err != nil {
		return
	}
	defer unlock()
	_, err = git(project, "worktree", "remove", "--force", "--force", path)
	removeAllIn(filepath.Join(project, filepath.FromSlash(checksRel), "wt"), path)
	if err != nil {
		_, _ = git(project, "worktree", "prune")
	}
}

// lockWorktrees serializes the check runners' worktree adds and removals
// in project, across processes.
func lockWorktrees(project string) (func(), error) { return flockRel(project, checksRel+"/wt.lock") }

// cleanCheckWorktrees removes the throwaway worktrees of runners that died
// (their folder's lock is free).
func cleanCheckWorktrees(project string) {
	wtRel := checksRel + "/wt"
	d, err := safepath.OpenDir(project, wtRel, false)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		if f := lockDeadWorktree(project, wtRel+"/"+n); f != nil {
			killWorkingIn(f.Name())
			_ = seat.TeardownBackendsIn(project, f.Name())
			dropCheckWorktree(project, f.Name())
			f.Close()
		}
	}
}

// lockDeadWorktree returns the folder rel locked for its cleaner when its
// runner is dead (its lock is free), else nil. Runners make and lock their
// folders under the same lock, so a free lock is never a live runner's.
func lockDeadWorktree(project, rel string) *os.File {
	unlock, err := lockWorktrees(project)
	if err != nil {
		return nil
	}
	defer unlock()
	f, err := safepath.OpenDir(project, rel, false)
	if err != nil {
		return nil
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		f.Close()
		return nil
	}
	return f
}

// killWorkingIn kills the processes whose working folder is in dir: what
// a killed runner's check left behind (its leader heard SIGTERM, the rest of
// its group did not). Nothing else works in a throwaway worktree.
func killWorkingIn(dir string) {
	// The kernel names a working folder by its real path.
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink("/proc/" + p.Name() + "/cwd")
		if err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+"/")) {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
}

// execCheck runs c in a throwaway worktree of commit and returns its
// record; an error (ctx ended, no worktree) means no verdict.
func execCheck(ctx context.Context, project string, c config.Check, commit, tree string, f checkFiles) (checkRecord, error) {
	if len(c.Run) == 0 || c.Run[0] == "" {
		return checkRecord{}, errors.New("its run: is empty")
	}
	rec := checkRecord{
		CheckResult: CheckResult{Name: c.Name, Log: f.abs(".log"), Exit: -1},
		Tree:        tree, Commit: commit, Argv: c.Run, Spec: checkSpec(c), At: time.Now().UTC(),
	}
	logFile, err := safepath.OpenFile(project, f.rel(".log"), os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
	if err != nil {
		return rec, err
	}
	defer logFile.Close()
	wt, err := addCheckWorktree(project, commit, c.Name)
	if err != nil {
		return rec, err
	}
	defer wt.remove()

	ports, env, done, err := checkBackend(project, c.Name, tree, wt.path, logFile)
	if err != nil {
		return rec, err
	}
	defer done() // before the worktree goes
	cmd := checkCommand(c, commit, tree, wt.path, ports[0])
	cmd.Env = append(cmd.Env, env...)
	out := &cappedLog{file: logFile}
	// One pipe of our own for stdout and stderr, interleaved: Wait then
	// returns when the check exits, not when the last process holding its
	// output does.
	pr, pw, err := os.Pipe()
	if err != nil {
		return rec, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	start := time.Now()
	// A check writes its throwaway worktree and its temp dir, nothing
	// else; it connects to its own ports and the egress proxy.
	release, cleanup, err := startContained(project, cmd, grant{write: []string{wt.path}, connect: ports, log: logFile, checkCache: true, caches: c.Cache})
	pw.Close()
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, pr)
		close(copied)
	}()
	if err != nil {
		pr.Close()
		<-copied
		rec.Took = time.Since(start)
		rec.Result, rec.Rerun = Error, true
		rec.Note = "could not start: " + startError(err)
		fmt.Fprintf(logFile, "fleetwatch: %s\n", rec.Note)
		return rec, nil
	}
	defer cleanup()
	limit := checkTimeout(c)
	timedOut := waitCheck(ctx, cmd, limit)
	release()
	rec.Took = time.Since(start)
	// Whatever it left behind (a server on its port) goes with it.
	killGroup(cmd.Process.Pid)
	select {
	case <-copied:
	case <-time.After(2 * time.Second): // a process that left the group holds the pipe
		pr.Close()
		<-copied
	}
	pr.Close()
	out.finish()
	if ctx.Err() != nil && !timedOut {
		return rec, ctx.Err()
	}
	rec.Exit = cmd.ProcessState.ExitCode()
	if timedOut {
		rec.Result, rec.Note = Timeout, "killed after "+shortDuration(limit)
	} else {
		rec.Result, rec.Note = exitVerdict(c, cmd.ProcessState, out)
	}
	return rec, nil
}

// checkCommand is c's command, set up to run in dir: the check's
// environment, and a process group of its own.
func checkCommand(c config.Check, commit, tree, dir string, port int) *exec.Cmd {
	env := []string{
		"PORT=" + strconv.Itoa(port), "FLEET_PORT=" + strconv.Itoa(port),
		"FLEET_CHECK=" + c.Name, "FLEET_COMMIT=" + commit, "FLEET_TREE=" + tree,
		"CI=1", "PWD=" + dir,
	}
	for k, v := range c.Env {
		env = append(env, k+"="+v)
	}
	cmd := exec.Command(c.Run[0], c.Run[1:]...)
	cmd.Dir = dir
	cmd.Env = gitenv.Env(env...)
	// Its own process group, so a timeout reaches everything it started;
	// and it hears of the runner's death instead of running on unwatched.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	sandbox.SetPdeathsig(cmd.SysProcAttr, syscall.SIGTERM)
	return cmd
}

// waitCheck waits for the started cmd to exit, stopping its group when
// limit passes (timedOut) or ctx ends, so it never runs on unwatched.
func waitCheck(ctx context.Context, cmd *exec.Cmd, limit time.Duration) (timedOut bool) {
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		timedOut = true
		stopGroup(pgid, done)
	case <-ctx.Done():
		stopGroup(pgid, done)
	}
	return timedOut
}

// exitVerdict judges a check that ran to its end by how it exited and,
// when it passed, by whether its output matches expect_output.
func exitVerdict(c config.Check, ps *os.ProcessState, out *cappedLog) (Result, string) {
	exit := ps.ExitCode()
	ws, _ := ps.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		return Error, "killed by signal " + unix.SignalName(ws.Signal())
	case exit == 126:
		return Error, "exit 126: could not execute"
	case exit == 127:
		return Error, "exit 127: command not found"
	case exit != 0:
		return Fail, "exit " + strconv.Itoa(exit)
	case c.ExpectOutput != nil && !out.matches(c.ExpectOutput.MatchString):
		return Fail, fmt.Sprintf("exit 0 but no match for expect_output %q", c.ExpectOutput.String())
	}
	return Pass, ""
}

// shortDuration is d as a person writes it: 10m, not 10m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// startError is why a program did not start, in words.
func startError(err error) string {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Name + ": " + ee.Err.Error()
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}

// stopGroup sends SIGTERM to the group, then SIGKILL after the grace, and
// waits for its leader.
func stopGroup(pgid int, done <-chan error) {
	_ = unix.Kill(-pgid, unix.SIGTERM)
	select {
	case <-done:
	case <-time.After(checkGrace):
		_ = unix.Kill(-pgid, unix.SIGKILL)
		<-done
	}
}

// killGroup kills what is left of the group and waits (briefly) until it is
// gone, so nothing writes in the worktree as it is removed.
func killGroup(pgid int) {
	if unix.Kill(-pgid, unix.SIGKILL) != nil {
		return
	}
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		if unix.Kill(-pgid, 0) != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkBackend is a check's ports (its PORT first) and, with
// fleetwatch.yaml's `worktree:` section, its own backend (never a
// worker's) under the pseudo agent id check-<name>-<tree>, with the
// variables for its environment; done tears it down and gives its ports
// back, noting a failure in the check's log.
func checkBackend(project, name, tree, dir string, log io.Writer) ([]int, []string, func(), error) {
	s, err := config.Load(project)
	if err != nil {
		return nil, nil, nil, err
	}
	if !s.Worktree.Set() {
		port, err := freeLoopbackPort()
		return []int{port}, nil, func() {}, err
	}
	b, done, err := seat.OwnBackend(project, s.Worktree, "check-"+name+"-"+short(tree), "", dir)
	if err != nil {
		return nil, nil, nil, err
	}
	env := b.Env
	for i := 1; i < len(b.Ports); i++ {
		env = append(env, "FLEET_PORT_"+strconv.Itoa(i)+"="+strconv.Itoa(b.Ports[i]))
	}
	return b.Ports, env, func() {
		if err := done(); err != nil {
			fmt.Fprintf(log, "fleetwatch: %v\n", err)
		}
	}, nil
}

// freeLoopbackPort is a port free on 127.0.0.1 now.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("no free loopback port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// cappedLog writes the first logHead bytes to file and keeps the last
// logTail in a ring, written after a note of what was left out.
type cappedLog struct {
	file    *os.File
	written int64
	ring    []byte // allocated once the head is full
	pos     int    // where the next byte goes in ring
	seen    int64  // bytes past the head
}

func (l *cappedLog) Write(p []byte) (int, error) {
	n := len(p)
	if room := logHead - l.written; room > 0 {
		k := min(int64(len(p)), room)
		if _, err := l.file.Write(p[:k]); err != nil {
			return n, nil // a full disk loses log, never the verdict
		}
		l.written += k
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if l.ring == nil {
		l.ring = make([]byte, logTail)
	}
	l.seen += int64(len(p))
	if len(p) > logTail {
		p = p[len(p)-logTail:]
	}
	k := copy(l.ring[l.pos:], p)
	copy(l.ring, p[k:])
	l.pos = (l.pos + len(p)) % logTail
	return n, nil
}

func (l *cappedLog) finish() {
	if l.seen == 0 {
		return
	}
	if l.seen > logTail {
		fmt.Fprintf(l.file, "\n[fleetwatch: %d bytes of output left out]\n", l.seen-logTail)
	}
	if l.seen >= logTail {
		_, _ = l.file.Write(l.ring[l.pos:])
	}
	_, _ = l.file.Write(l.ring[:l.pos])
}

// matches runs match over the output as the log keeps it.
func (l *cappedLog) matches(match func(string) bool) bool {
	fi, err := l.file.Stat()
	if err != nil {
		return false
	}
	data, err := io.ReadAll(io.NewSectionReader(l.file, 0, fi.Size()))
	return err == nil && match(string(data))
}
