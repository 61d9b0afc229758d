package planfs

import (
	"errors"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames src to dst in one step unless dst exists.
func renameNoReplace(src, dst string) error {
	return unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE)
}

// renameExchange swaps a and b in one step; it fails if either is gone.
func renameExchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// renameFlagUnsupported says the filesystem (or kernel) cannot honour the
// rename's flag, so the caller falls back to a weaker move.
func renameFlagUnsupported(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP)
}
