package planfs

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// moveNoReplace renames src to dst and fails with os.ErrExist rather than
// overwrite dst. Filesystems without RENAME_NOREPLACE get link+unlink, which
// is just as exclusive.
func moveNoReplace(src, dst string) error {
	err := unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		if err = os.Link(src, dst); err != nil {
			return err
		}
		if err = os.Remove(src); err != nil {
			return err
		}
	default:
		return &os.LinkError{Op: "rename", Old: src, New: dst, Err: err}
	}
	syncDir(filepath.Dir(src))
	if filepath.Dir(dst) != filepath.Dir(src) {
		syncDir(filepath.Dir(dst))
	}
	return nil
}

// syncDir makes a rename durable; errors are ignored because some
// filesystems refuse fsync on directories and the rename itself succeeded.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
