package workers

import (
	"errors"

	"golang.org/x/sys/unix"
)

// peerPid is the pid of the process at the other end of a Unix socket.
func peerPid(fd int) (int, error) {
	return unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
}

// becomeSubreaper fails: macOS has no child subreaper, so orphans an agent
// leaves go to launchd and only its process group is stopped.
func becomeSubreaper() error { return errors.New("macOS has no child subreaper") }
