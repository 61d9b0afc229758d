package look

import (
	"golang.org/x/sys/unix"
)

// dupOnto makes fd newfd a copy of oldfd.
func dupOnto(oldfd, newfd int) error { return unix.Dup3(oldfd, newfd, 0) }
