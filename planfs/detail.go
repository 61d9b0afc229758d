package planfs

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// ReadLeaseRaw returns the bytes of the lease file named file in .leases/,
// as they are on disk, for an operator to read: at most leaseLimit of them
// (truncated says more were there). It never follows a symlink and never
// opens a FIFO.
func (t *Tree) ReadLeaseRaw(file string) (data []byte, truncated bool, err error) {
	if file == "" || strings.ContainsAny(file, "/\\") || file == "." || file == ".." {
		return nil, false, fmt.Errorf("%q is not a lease file name", file)
	}
	f, err := t.openPlansFile(".leases/"+file, os.O_RDONLY)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, leaseLimit+1))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %v", file, errText(err))
	}
	if len(data) > leaseLimit {
		return data[:leaseLimit], true, nil
	}
	return data, false, nil
}
