package contain

import (
	"golang.org/x/sys/unix"
)

// peerPid is the pid of the process at the other end of a Unix socket.
func peerPid(fd int) (int, error) {
	return unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
}
