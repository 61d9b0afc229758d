package planfs

import (
	"errors"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames src to dst in one step unless dst exists:
// renameatx_np(RENAME_EXCL), darwin's RENAME_NOREPLACE.
func renameNoReplace(src, dst string) error {
	return unix.RenameatxNp(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.RENAME_EXCL)
}

// renameExchange swaps a and b in one step; it fails if either is gone:
// renameatx_np(RENAME_SWAP), darwin's RENAME_EXCHANGE.
func renameExchange(a, b string) error {
	return unix.RenameatxNp(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_SWAP)
}

// renameFlagUnsupported says the filesystem cannot honour the rename's flag
// (HFS+ and network volumes lack some), so the caller falls back to a weaker
// move. Darwin has both ENOTSUP and EOPNOTSUPP, as distinct numbers.
func renameFlagUnsupported(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) ||
		errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP)
}
