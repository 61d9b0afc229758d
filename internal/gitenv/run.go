package gitenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultTimeout bounds a Call that names no timeout: a worktree add on a
// big repository or a push to a slow remote takes seconds, not minutes.
const DefaultTimeout = 2 * time.Minute

// waitDelay is how long Run waits for git's pipes once git has exited or
// been killed: a child that outlives it must not hold Run.
const waitDelay = time.Second

// stderrCap bounds the stderr kept; errors show its first line, and
// callers search it for a remote's answer, never for megabytes.
const stderrCap = 64 << 10

// noPrompt is the environment that keeps git and ssh from asking anyone
// anything: a headless worker has nobody to answer, and would hang.
var noPrompt = []string{"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=true", "SSH_ASKPASS=true"}

// Call is one run of git.
type Call struct {
	Dir  string   // the repository or worktree (git -C Dir); "" for none
	Args []string // optional -c/-C pairs, the subcommand and its arguments
	Env  []string // added to the safe environment, winning over it
	// Stdin is git's standard input; nil gives it none.
	Stdin []byte
	// Timeout bounds the run; 0 is DefaultTimeout.
	Timeout time.Duration
	// Limit is the most stdout bytes kept; 0 keeps all. Past it Run stops
	// reading (git stops on the broken pipe), so a huge blob or diff is
	// never held whole; Result.Truncated says so.
	Limit int
}

// Result is what a git run gave back.
type Result struct {
	Out       []byte // stdout, at most Call.Limit bytes
	Truncated bool   // stdout was cut at Call.Limit
	Stderr    string // stderr, its first 64 KiB
	// Code is git's exit code: 0, or non-zero for a refusal or an answer
	// (merge-tree's 1 is "conflicts"); -1 when git did not exit by itself.
	Code int
}

// Text is stdout with surrounding white space trimmed.
func (r Result) Text() string { return strings.TrimSpace(string(r.Out)) }

// Error is a git run that did not exit 0: it exited non-zero (Code), was
// stopped at its deadline (Timeout), or by its context or never started
// (Err).
type Error struct {
	Sub     string        // git's subcommand
	Code    int           // git's exit code; -1 when it did not exit by itself
	Stderr  string        // what git wrote to stderr
	Timeout time.Duration // set when Run killed it at its deadline
	Err     error         // the context's error or the start failure
}

func (e *Error) Error() string {
	switch {
	case e.Timeout > 0:
		return fmt.Sprintf("git %s: no answer within %v", e.Sub, e.Timeout)
	case e.Code > 0:
		msg, _, _ := strings.Cut(strings.TrimSpace(e.Stderr), "\n")
		if msg == "" {
			msg = fmt.Sprintf("exit status %d", e.Code)
		}
		return fmt.Sprintf("git %s: %s", e.Sub, msg)
	}
	return fmt.Sprintf("git %s: %v", e.Sub, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ownGit holds the pids of the git processes Run waits for.
var ownGit sync.Map

// Running reports whether pid is a git process Run started and has not yet
// collected. A worker is the subreaper of its agent's orphans and reaps
// and kills the children it did not start; the git it runs on other
// goroutines (publishing its record) are its own, and left to Run. (For
// the moment between fork and this record, such a git may be taken for
// an orphan: at worst that one git fails, as at a dropped connection.)
func Running(pid int) bool {
	_, ok := ownGit.Load(pid)
	return ok
}

// Run runs git as Command does (the safe options, GitEnv, a linked
// worktree pinned), with no prompts and LC_ALL=C so its output and
// errors parse the same everywhere, in a process group of its own that is
// killed whole at the deadline or when ctx is done: a killed push whose
// pack-objects lived on could still land seconds after its caller gave up.
// A non-zero exit is an *Error and its code is in the Result too.
func Run(ctx context.Context, c Call) (Result, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := Command(runCtx, c.Dir, c.Args...)
	cmd.Env = append(append(append(cmd.Env, "LC_ALL=C"), noPrompt...), c.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	out := &capped{limit: c.Limit}
	errb := &capped{limit: stderrCap, quiet: true}
	cmd.Stdout, cmd.Stderr = out, errb
	err := cmd.Start()
	if err == nil {
		ownGit.Store(cmd.Process.Pid, true)
		err = cmd.Wait()
		ownGit.Delete(cmd.Process.Pid)
	}
	if cmd.Process != nil && (err != nil && runCtx.Err() != nil || errors.Is(err, exec.ErrWaitDelay)) {
		// Whatever is left of its group goes too: a child still running at
		// the deadline, or one that kept the pipes after git exited.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	r := Result{Out: out.buf.Bytes(), Truncated: out.over, Stderr: errb.buf.String()}
	return judge(ctx, runCtx, r, err, timeout, subcommand(c.Args))
}

// judge turns cmd.Run's error into r's Code and Run's error.
func judge(ctx, runCtx context.Context, r Result, err error, timeout time.Duration, sub string) (Result, error) {
	var ee *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		// Exited 0, even if at the deadline; ErrWaitDelay: a child of
		// git's kept the pipes after it.
		return r, nil
	case ctx.Err() != nil:
		r.Code = -1
		return r, &Error{Sub: sub, Code: -1, Stderr: r.Stderr, Err: ctx.Err()}
	case runCtx.Err() != nil:
		r.Code = -1
		return r, &Error{Sub: sub, Code: -1, Stderr: r.Stderr, Timeout: timeout, Err: runCtx.Err()}
	case r.Truncated:
		// Stopped by the cap, not by anything wrong: its exit says nothing.
		return r, nil
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		r.Code = ee.ExitCode()
		return r, &Error{Sub: sub, Code: r.Code, Stderr: r.Stderr}
	}
	r.Code = -1
	return r, &Error{Sub: sub, Code: -1, Stderr: r.Stderr, Err: err}
}

// subcommand is the first of args after any -c/-C pairs.
func subcommand(args []string) string {
	if i := subIndex(args); i < len(args) {
		return args[i]
	}
	return ""
}

// errFull stops the copy of a stdout past its cap.
var errFull = errors.New("output past its cap")

// capped keeps the first limit bytes written (all when limit is 0). Past
// the limit it refuses, which ends os/exec's copy and closes git's pipe;
// a quiet one drops the rest instead and lets git finish.
type capped struct {
	buf   bytes.Buffer
	limit int
	over  bool
	quiet bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.limit - c.buf.Len()
	if c.limit == 0 || len(p) <= room {
		return c.buf.Write(p)
	}
	c.buf.Write(p[:max(0, room)])
	if c.quiet {
		return len(p), nil
	}
	c.over = true
	return max(0, room), errFull
}
