package contain

import (
	"golang.org/x/sys/unix"
)

// peerPid is the pid of the process at the other end of a Unix socket.
func peerPid(fd int) (int, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Pid), nil
}
