package sandbox

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/term"
)

// Start starts cmd as Spawn does, inside p's domain, in no cgroup.
func (p Policy) Start(cmd *exec.Cmd) (release func(), err error) {
	return Spawn{Policy: &p}.Start(cmd)
}

// Spawn is how one agent, turn, reviewer or check is started: alone in a
// session with no terminal, with no capability, in its cgroups, and in a
// Landlock domain when Policy is set.
type Spawn struct {
	Policy *Policy // nil: no Landlock domain (uncontained)
	Group  *Group  // nil: no cgroup could be made
}

// alone makes cmd the leader of a session of its own, with no controlling
// terminal and no terminal on its standard input: nothing it runs can
// reach the operator's terminal (TIOCSTI needs it as the controlling one,
// or CAP_SYS_ADMIN, which it does not hold either). Its process group is
// its session's, numbered by its pid as with Setpgid.
func alone(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	a.Setsid, a.Setpgid, a.Pgid, a.Setctty, a.Foreground, a.Noctty = true, false, 0, false, false, false
	if f, ok := cmd.Stdin.(*os.File); ok && f != nil && term.IsTerminal(int(f.Fd())) {
		cmd.Stdin = nil
	}
}
