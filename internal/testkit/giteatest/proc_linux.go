package giteatest

import (
	"os/exec"
	"runtime"
	"syscall"
)

// setProcAttr puts the server in a group of its own (so Stop kills its
// git children too) and has the kernel kill it when the test binary dies
// without a Stop (the shared server, a timed-out test).
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// lockThread keeps the calling goroutine on its thread for good: the
// parent-death signal fires when the thread that forked exits.
func lockThread() { runtime.LockOSThread() }
