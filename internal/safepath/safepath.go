// Package safepath opens and creates the folders and files fleetwatch writes
// inside a project without ever following a symlink below the project root.
// A cloned repository is untrusted input: a committed symlink such as
// `.plans/logs/events.jsonl -> ../../../.bashrc` must never turn a verb into
// a write outside the project. Every component below root is walked with
// openat(2) and O_NOFOLLOW, so a symlink is refused where it stands instead
// of being checked first and followed later. The root itself is the
// operator's choice and may be reached through symlinks.
package safepath

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Sentinels callers test with errors.Is.
var (
	ErrSymlink    = errors.New("is a symlink; fleetwatch never writes through one")
	ErrNotDir     = errors.New("is not a directory")
	ErrNotRegular = errors.New("is not a regular file")
	ErrBadPath    = errors.New("is not a path inside the project")
)

// Error names the offending path relative to the project root.
type Error struct {
	Rel string // slash-separated, relative to the root
	Err error  // one of the sentinels, or the system call's error
}

func (e *Error) Error() string {
	if Refused(e.Err) || errors.Is(e.Err, ErrBadPath) {
		return e.Rel + " " + e.Err.Error()
	}
	return e.Rel + ": " + errText(e.Err)
}

// Reason is the error's words without the path, for a report that names
// the path in its own column.
func (e *Error) Reason() string {
	if Refused(e.Err) || errors.Is(e.Err, ErrBadPath) {
		return e.Err.Error()
	}
	return errText(e.Err)
}

// Refused reports whether err is a refusal of what sits at a path (a
// symlink, a folder that is not one, a file that is not regular) rather
// than a failing system call.
func Refused(err error) bool {
	return errors.Is(err, ErrSymlink) || errors.Is(err, ErrNotDir) || errors.Is(err, ErrNotRegular)
}

func (e *Error) Unwrap() error { return e.Err }

// errText is an error's words without Go's "open /x/y:" prefix.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// split checks rel and returns its components.
func split(rel string) ([]string, error) {
	rel = filepath.ToSlash(rel)
	if rel == "" || strings.HasPrefix(rel, "/") {
		return nil, &Error{Rel: rel, Err: ErrBadPath}
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.IndexByte(p, 0) >= 0 {
			return nil, &Error{Rel: rel, Err: ErrBadPath}
		}
	}
	return parts, nil
}

// openRoot opens the project root, following symlinks in its own path.
func openRoot(root string) (int, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &Error{Rel: root, Err: err}
	}
	return fd, nil
}

// classify turns a failed no-follow open of name in dirfd into our error:
// a symlink or a non-directory is named as such, anything else passes on.
func classify(dirfd int, name, rel string, err error) error {
	var st unix.Stat_t
	if serr := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); serr == nil {
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			return &Error{Rel: rel, Err: ErrSymlink}
		case unix.S_IFDIR:
		default:
			if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
				return &Error{Rel: rel, Err: ErrNotDir}
			}
		}
	}
	return &Error{Rel: rel, Err: err}
}

// walk opens the directory root/parts..., one component at a time without
// following symlinks, creating missing ones when create is set. It returns
// the directory's descriptor; the caller closes it.
func walk(root string, parts []string, create bool) (int, error) {
	fd, err := openRoot(root)
	if err != nil {
		return -1, err
	}
	for i, name := range parts {
		rel := strings.Join(parts[:i+1], "/")
		next, err := openDirAt(fd, name, rel, create)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

func openDirAt(dirfd int, name, rel string, create bool) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	for attempt := 0; ; attempt++ {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if err == nil {
			return fd, nil
		}
		if !errors.Is(err, unix.ENOENT) || !create || attempt > 0 {
			return -1, classify(dirfd, name, rel, err)
		}
		// EEXIST: a racer made it first; the next open judges what it is.
		if err := unix.Mkdirat(dirfd, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, &Error{Rel: rel, Err: err}
		}
	}
}

// MkdirAll makes sure root/rel is a directory reached without a symlink,
// creating the missing components, and returns its absolute path.
func MkdirAll(root, rel string) (string, error) {
	d, err := OpenDir(root, rel, true)
	if err != nil {
		return "", err
	}
	d.Close()
	return filepath.Join(root, filepath.FromSlash(rel)), nil
}

// OpenDir opens root/rel as a directory reached without a symlink, creating
// missing components when create is set; rel "." is root itself. The file's
// Name is the absolute path, for messages.
func OpenDir(root, rel string, create bool) (*os.File, error) {
	var parts []string
	if rel != "." {
		var err error
		if parts, err = split(rel); err != nil {
			return nil, err
		}
	}
	fd, err := walk(root, parts, create)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(root, filepath.FromSlash(rel))), nil
}

// OpenFile opens root/rel with flag like os.OpenFile, refusing a symlink in
// any component; with O_CREATE, missing parent folders are created. Only a
// regular file is opened: a FIFO planted there fails at once (O_NONBLOCK)
// instead of hanging the verb.
func OpenFile(root, rel string, flag int, perm os.FileMode) (*os.File, error) {
	parts, err := split(rel)
	if err != nil {
		return nil, err
	}
	dirfd, err := walk(root, parts[:len(parts)-1], flag&os.O_CREATE != 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	name := parts[len(parts)-1]
	fd, err := unix.Openat(dirfd, name, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, openError(dirfd, name, rel, err)
	}
	if err := regularBlocking(fd); err != nil {
		unix.Close(fd)
		return nil, &Error{Rel: rel, Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(root, filepath.FromSlash(rel))), nil
}

// openError says why opening name in dirfd (rel from the root) failed:
// a symlink (ELOOP under O_NOFOLLOW), or something not a regular file
// (ENXIO: a FIFO or socket under O_NONBLOCK), or err itself.
func openError(dirfd int, name, rel string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENXIO) {
		if cerr := classify(dirfd, name, rel, err); errors.Is(cerr, ErrSymlink) {
			return cerr
		}
		if errors.Is(err, unix.ENXIO) {
			return &Error{Rel: rel, Err: ErrNotRegular}
		}
	}
	return &Error{Rel: rel, Err: err}
}

// regularBlocking refuses an fd that is not a regular file and sets it
// back to blocking, as os.OpenFile would give it.
func regularBlocking(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return ErrNotRegular
	}
	return unix.SetNonblock(fd, false)
}

// WriteNew creates root/rel holding data when it does not exist yet; one that
// exists (whatever it is) is left alone. It reports whether it wrote.
func WriteNew(root, rel string, data []byte, perm os.FileMode) (bool, error) {
	f, err := OpenFile(root, rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		// O_EXCL refuses a symlink too: say so rather than keep quiet.
		if cerr := Check(root, rel); cerr != nil {
			return false, cerr
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, &Error{Rel: rel, Err: err}
	}
	return true, nil
}

// Check reports, without changing anything, the first component of rel
// (root excluded) that is a symlink, or a folder on the way that is not a
// directory. Missing components are fine: a write would create them.
func Check(root, rel string) error {
	parts, err := split(rel)
	if err != nil {
		return err
	}
	p := root
	for i, name := range parts {
		p = filepath.Join(p, name)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		r := strings.Join(parts[:i+1], "/")
		switch {
		case err != nil:
			return &Error{Rel: r, Err: err}
		case fi.Mode()&fs.ModeSymlink != 0:
			return &Error{Rel: r, Err: ErrSymlink}
		case i < len(parts)-1 && !fi.IsDir():
			return &Error{Rel: r, Err: ErrNotDir}
		}
	}
	return nil
}
