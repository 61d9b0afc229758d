// Package agentfile reads a file an agent could have written (a plan
// turn's proposal, $FLEET_USAGE, a reviewer's $FLEET_REVIEW) without
// letting the agent choose what the read does: the last component is never
// followed if it is a symlink, the open never waits (a FIFO there would
// hold the reader until a writer came), only a regular file is read, and
// never more than a bound. Every error names the file.
package agentfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Max is the bound for a file whose kind needs no other.
const Max = 1 << 20

// ErrNotRegular is a FIFO, device, socket, folder or symlink where a file
// was wanted.
var ErrNotRegular = errors.New("is not a regular file")

// ErrTooLarge is a file over its bound.
var ErrTooLarge = errors.New("is larger than allowed")

// Error names the file a read refused or failed on.
type Error struct {
	Path  string
	Limit int64 // for ErrTooLarge
	Err   error
}

func (e *Error) Error() string {
	switch {
	case errors.Is(e.Err, ErrTooLarge):
		return fmt.Sprintf("%s is larger than %d bytes", e.Path, e.Limit)
	case errors.Is(e.Err, ErrNotRegular):
		return e.Path + " " + e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Read is the whole of the regular file at path, at most limit bytes
// (Max when limit is 0). A missing file is an error that matches
// fs.ErrNotExist; a symlink, FIFO or device is ErrNotRegular; a longer
// file is ErrTooLarge.
func Read(path string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = Max
	}
	f, _, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A regular file never blocks a read; it may still grow while read.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &Error{Path: path, Err: unwrap(err)}
	}
	if int64(len(data)) > limit {
		return nil, &Error{Path: path, Limit: limit, Err: ErrTooLarge}
	}
	return data, nil
}

// Open opens the regular file at path for reading, as Read does, for a
// caller that reads it in parts; st is what fstat(2) said of it, its size
// at most limit (Max when 0).
func Open(path string, limit int64) (f *os.File, st unix.Stat_t, err error) {
	if limit <= 0 {
		limit = Max
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENXIO) || errors.Is(err, unix.EWOULDBLOCK) {
			err = ErrNotRegular
		}
		return nil, st, &Error{Path: path, Err: err}
	}
	fail := func(err error) (*os.File, unix.Stat_t, error) {
		unix.Close(fd)
		return nil, st, &Error{Path: path, Limit: limit, Err: err}
	}
	if err := unix.Fstat(fd, &st); err != nil {
		return fail(err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fail(ErrNotRegular)
	}
	if st.Size > limit {
		return fail(ErrTooLarge)
	}
	return os.NewFile(uintptr(fd), path), st, nil
}

// unwrap drops Go's "read /x/y:" prefix: Error names the file itself.
func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
