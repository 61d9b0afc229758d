package planfs

import (
	"os"
	"syscall"
)

// ctime is when the file's inode last changed (a link, rename or write), in
// Unix seconds.
func ctime(fi os.FileInfo) float64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return float64(st.Ctim.Sec) + float64(st.Ctim.Nsec)/1e9
	}
	return unixSeconds(fi.ModTime())
}
