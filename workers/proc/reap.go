package proc

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// subreaper is set once this process is a child subreaper: orphans of the
// agent (a daemon that called setsid, a double fork) are then re-parented
// to the driver instead of init, where the driver can find and stop them.
var subreaper atomic.Bool

// BecomeSubreaper makes this process a child subreaper (PR_SET_CHILD_SUBREAPER),
// so every process an agent leaves behind stays in reach of the driver. The
// fleetwatch driver calls it once before running agents; a process that
// starts other long-lived children of its own (a test binary, the UI) must
// not, because Run then stops and reaps every child it did not start with
// os/exec in its own process group.
func BecomeSubreaper() error {
	if err := becomeSubreaper(); err != nil {
		return err
	}
	subreaper.Store(true)
	return nil
}

// ProcStat is the little of /proc/<pid>/stat the reaper needs.
type ProcStat struct {
	state byte
	pgid  int
	Sid   int
	start uint64 // clock ticks after boot: with the pid, names one process for good
}

func ReadStat(pid int) (ProcStat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ProcStat{}, false
	}
	// The command name may hold blanks and parentheses: fields start after
	// the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ProcStat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return ProcStat{}, false
	}
	pgid, _ := strconv.Atoi(f[2])
	sid, _ := strconv.Atoi(f[3])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return ProcStat{state: f[0][0], pgid: pgid, Sid: sid, start: start}, true
}

// childrenOf lists pid's children, from every thread's children file (Go
// forks from whichever thread it runs on). pid 0 means this process.
func childrenOf(pid int) []int {
	dir := "/proc/self/task"
	if pid != 0 {
		dir = "/proc/" + strconv.Itoa(pid) + "/task"
	}
	files, _ := filepath.Glob(dir + "/*/children")
	var out []int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, w := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(w); err == nil && n > 0 {
				out = append(out, n)
			}
		}
	}
	return out
}

// AgentProcs lists the processes that belong to the agent whose pid is
// agent: the agent and its descendants while it has not been reaped (after
// that its pid may name another process), and, when this process is a
// subreaper, the orphans it adopted (direct children outside this process's
// own group, which every child os/exec starts for the driver shares) and
// their descendants. adopted is the subset this process must reap itself.
func AgentProcs(agent int, exited bool) (all, adopted []int) {
	seen := map[int]bool{}
	var walk func(pid int)
	walk = func(pid int) {
		if seen[pid] {
			return
		}
		seen[pid] = true
		all = append(all, pid)
		for _, c := range childrenOf(pid) {
			walk(c)
		}
	}
	if !exited {
		walk(agent)
	}
	if subreaper.Load() {
		own := syscall.Getpgrp()
		for _, c := range childrenOf(0) {
			if c == agent || seen[c] || gitenv.Running(c) || isSupervisor(c) {
				continue
			}
			if st, ok := ReadStat(c); ok && st.pgid != own {
				adopted = append(adopted, c)
				walk(c)
			}
		}
	}
	return all, adopted
}

// ReapAdopted collects adopted orphans that have exited, each by its pid:
// never wait4(-1), which would take os/exec's exit status of the agent.
func ReapAdopted(adopted []int) {
	for _, pid := range adopted {
		if st, ok := ReadStat(pid); ok && st.state == 'Z' {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		}
	}
}

// SignalAgent sends sig to the agent's process group and to every process
// agentProcs finds, and reports how many of those are still running (not
// zombies). Zombies it adopted are reaped on the way.
func SignalAgent(agent int, exited bool, sig syscall.Signal) (running int) {
	_ = syscall.Kill(-agent, sig)
	all, adopted := AgentProcs(agent, exited)
	for _, pid := range all {
		if pid == agent {
			continue // os/exec waits for it; its group got sig already
		}
		if st, ok := ReadStat(pid); ok && st.state != 'Z' {
			_ = syscall.Kill(pid, sig)
		}
	}
	ReapAdopted(adopted)
	return CountRunning(agent, exited)
}

// CountRunning counts the agent's processes that have not exited yet, its
// group included.
func CountRunning(agent int, exited bool) int {
	all, adopted := AgentProcs(agent, exited)
	ReapAdopted(adopted)
	n := 0
	for _, pid := range all {
		if st, ok := ReadStat(pid); ok && st.state != 'Z' {
			n++
		}
	}
	if n == 0 && syscall.Kill(-agent, 0) == nil {
		// A member of its group we cannot see (the agent is not our
		// subreaper's child, or left through a process we do not walk).
		n = 1
	}
	return n
}

// AdoptedOrphans is agentProcs' adopted alone: the orphans to reap as they
// exit while the agent still runs.
func AdoptedOrphans(agent int) []int {
	if !subreaper.Load() {
		return nil
	}
	own := syscall.Getpgrp()
	var out []int
	for _, c := range childrenOf(0) {
		if gitenv.Running(c) || isSupervisor(c) {
			continue // this driver's own git, publishing its record; its supervisor
		}
		if st, ok := ReadStat(c); ok && c != agent && st.pgid != own {
			out = append(out, c)
		}
	}
	return out
}

// AgentStreams carries the agent's stdout and stderr from pipes into the
// log.
type AgentStreams struct {
	r, w []*os.File
	done chan struct{}
	n    int
}

// StartStreams gives cmd a pipe for stdout and one for stderr, copied to
// out and errw line by line.
func StartStreams(cmd *exec.Cmd, out, errw *look.LineWriter) (*AgentStreams, error) {
	s := &AgentStreams{done: make(chan struct{}, 2)}
	for _, w := range []*look.LineWriter{out, errw} {
		r, pw, err := os.Pipe()
		if err != nil {
			s.close()
			return nil, err
		}
		s.r, s.w = append(s.r, r), append(s.w, pw)
		go func() {
			_, _ = io.Copy(w, r)
			s.done <- struct{}{}
		}()
		s.n++
	}
	cmd.Stdout, cmd.Stderr = s.w[0], s.w[1]
	return s, nil
}

// StartTalkStreams is StartStreams for an agent the driver talks to: its
// stderr is copied to errw, while its stdin and stdout are pipes the
// driver holds (in, out) for the conversation. Drain closes them too.
func StartTalkStreams(cmd *exec.Cmd, errw *look.LineWriter) (s *AgentStreams, in io.WriteCloser, out io.Reader, err error) {
	s = &AgentStreams{done: make(chan struct{}, 1)}
	pipes := make([][2]*os.File, 3)
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			s.close()
			return nil, nil, nil, err
		}
		pipes[i] = [2]*os.File{r, w}
		s.r, s.w = append(s.r, r), append(s.w, w)
	}
	errR, outR := pipes[0][0], pipes[2][0]
	go func() {
		_, _ = io.Copy(errw, errR)
		s.done <- struct{}{}
	}()
	s.n = 1
	// The agent's ends: stdin's read end, stdout's and stderr's write
	// ends; Started closes the driver's copies of those only.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pipes[1][0], pipes[2][1], pipes[0][1]
	s.w = []*os.File{pipes[0][1], pipes[1][0], pipes[2][1]}
	s.r = []*os.File{errR, pipes[1][1], outR}
	return s, pipes[1][1], outR, nil
}

// Started closes the driver's copies of the write ends once the agent has
// its own, so the pipes end when the agent's side does.
func (s *AgentStreams) Started() {
	for _, w := range s.w {
		w.Close()
	}
	s.w = nil
}

// drainWait bounds how long the driver reads output after the agent and
// what it left have gone: a process it could not see (a double fork while
// the driver is no subreaper) may hold the pipe for ever.
const drainWait = 2 * time.Second

// Drain waits for the copiers to reach the end of the pipes, at most
// drainWait, then closes them.
func (s *AgentStreams) Drain() {
	s.Started()
	limit := time.After(drainWait)
	for s.n > 0 {
		select {
		case <-s.done:
			s.n--
		case <-limit:
			for _, r := range s.r {
				_ = r.SetReadDeadline(time.Now())
			}
			for ; s.n > 0; s.n-- {
				<-s.done
			}
		}
	}
	s.close()
}

func (s *AgentStreams) close() {
	for _, f := range append(s.r, s.w...) {
		f.Close()
	}
	s.r, s.w = nil, nil
}
