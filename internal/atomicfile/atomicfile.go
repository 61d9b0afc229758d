// Package atomicfile replaces small files whole: a reader sees the old
// content or the new, never half of it.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Write replaces path with data through a temporary file in the same folder
// and a rename. A new file gets perm; an existing one keeps its permissions.
// It trusts path's folder; inside a project use WriteAt on a folder opened
// with safepath.
func Write(path string, data []byte, perm os.FileMode) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
		perm = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// WriteAt is Write for the file name inside the open folder dir: the temp
// file and the rename are relative to dir's descriptor, so they land in that
// folder even if a path to it is swapped for a symlink meanwhile. The rename
// replaces a symlink at name; it never writes through one.
func WriteAt(dir *os.File, name string, data []byte, perm os.FileMode) error {
	dirfd := int(dir.Fd())
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		perm = os.FileMode(st.Mode & 0o777)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	tmp := "." + name + ".tmp-" + hex.EncodeToString(b[:])
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return pathErr("create", dir, tmp, err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir.Name(), tmp))
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm.Perm())
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if rerr := unix.Renameat(dirfd, tmp, dirfd, name); rerr != nil {
			err = pathErr("rename", dir, name, rerr)
		}
	}
	if err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
	}
	return err
}

func pathErr(op string, dir *os.File, name string, err error) error {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return &os.PathError{Op: op, Path: filepath.Join(dir.Name(), name), Err: errno}
	}
	return err
}
