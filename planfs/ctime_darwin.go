package planfs

import (
	"os"
	"syscall"
)

// ctime is when the file's inode last changed (a link, rename or write), in
// Unix seconds; darwin names the field Ctimespec.
func ctime(fi os.FileInfo) float64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return float64(st.Ctimespec.Sec) + float64(st.Ctimespec.Nsec)/1e9
	}
	return unixSeconds(fi.ModTime())
}
