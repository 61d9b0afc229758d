package tree

import (
	"os"
)

func IsFolder(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}
