package tree

import (
	"os"
)

// IsFolder reports whether p is a folder itself, not a symlink to one.
func IsFolder(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}
