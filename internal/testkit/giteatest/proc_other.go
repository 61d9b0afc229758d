//go:build unix && !linux

package giteatest

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the server in a group of its own so that Stop kills
// its git children too. Without Linux's parent-death signal a shared
// server outlives a test binary that dies without stopping it.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func lockThread() {}
