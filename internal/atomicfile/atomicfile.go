// Package atomicfile replaces small files whole: a reader sees the old
// content or the new, never half of it.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data through a temporary file in the same folder
// and a rename. A new file gets perm; an existing one keeps its permissions.
func Write(path string, data []byte, perm os.FileMode) error {
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), perm)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
