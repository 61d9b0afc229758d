package sandbox

import "golang.org/x/sys/unix"

// parentOf is pid's parent as the kernel's process table (sysctl
// kern.proc.pid) says, as macOS has no /proc; 0 when it cannot be read.
func parentOf(pid int) int {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(kp.Proc.P_pid) != pid {
		return 0
	}
	return int(kp.Eproc.Ppid)
}
