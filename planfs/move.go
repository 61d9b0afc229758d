package planfs

import (
	"os"
	"path/filepath"
)

// moveNoReplace renames src to dst and fails with os.ErrExist rather than
// overwrite dst. Filesystems without RENAME_NOREPLACE get link+unlink, which
// is just as exclusive.
func moveNoReplace(src, dst string) error {
	err := renameNoReplace(src, dst)
	switch {
	case err == nil:
	case renameFlagUnsupported(err):
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
