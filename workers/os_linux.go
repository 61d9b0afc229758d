package workers

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

// dupOnto makes fd newfd a copy of oldfd.
func dupOnto(oldfd, newfd int) error { return unix.Dup3(oldfd, newfd, 0) }

func becomeSubreaper() error { return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }
