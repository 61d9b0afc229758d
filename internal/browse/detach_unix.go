//go:build unix

package browse

import (
	"os/exec"
	"syscall"
)

// detach starts cmd in a session of its own: no terminal, no signal from
// the cockpit's process group.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
