package serve

import "golang.org/x/sys/unix"

// ioctlInputQueue asks a terminal how many bytes wait to be read.
const ioctlInputQueue = unix.TIOCINQ
