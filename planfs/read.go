package planfs

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"
)

// maxPlanText bounds ReadPlan: a plan is a page or two of markdown, and a
// renderer laying out more than a megabyte would freeze the screen.
const maxPlanText = 1 << 20

// ReadPlan returns a plan's whole text, at most maxPlanText (1 MiB) bytes, with Truncated set when cut.
func (t *Tree) ReadPlan(rel string) (text string, truncated bool, err error) {
	if _, _, err := SplitRel(rel); err != nil {
		return "", false, err
	}
	path, err := t.planTarget(rel)
	if err != nil {
		return "", false, err
	}
	f, err := openRegular(rel, path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPlanText+1))
	if err != nil {
		return "", false, readErr(rel, err)
	}
	if len(data) > maxPlanText {
		data, truncated = cutRunes(data[:maxPlanText]), true
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return "", false, planErr(rel, ErrUnreadable, "%v", errBinary)
	}
	return strings.ToValidUTF8(string(data), "\uFFFD"), truncated, nil
}

// openRegular opens the plan rel's file at path for reading, refusing
// anything but a regular file.
func openRegular(rel, path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, readErr(rel, err)
	}
	// Checked before opening: opening a FIFO for reading would block.
	if !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return nil, planErr(rel, ErrUnreadable, "is a directory, not a plan")
		}
		return nil, planErr(rel, ErrUnreadable, "not a regular file")
	}
	// O_NONBLOCK in case a FIFO took the file's place since the Stat.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, readErr(rel, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, planErr(rel, ErrUnreadable, "not a regular file")
	}
	return f, nil
}

// planTarget returns the file to read for rel. A symlink is judged as Scan
// judges one: it must resolve, and to a file inside the tree. The resolved
// path is returned, so the link cannot be swapped for one leading out
// between the check and the read.
func (t *Tree) planTarget(rel string) (string, error) {
	path := t.Abs(rel)
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, lerr := os.Lstat(path); lerr == nil {
				return "", planErr(rel, ErrUnreadable, "broken symlink")
			}
		}
		return "", readErr(rel, err)
	}
	plansReal, err := filepath.EvalSymlinks(t.Plans)
	if err != nil {
		return "", readErr(rel, err)
	}
	if r, err := filepath.Rel(plansReal, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", planErr(rel, ErrUnreadable, "symlink leaving the tree; not read")
	}
	return real, nil
}

// readErr turns a failed look at a plan into ErrNotFound (a worker moved
// it since the last scan) or ErrUnreadable.
func readErr(rel string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return planErr(rel, ErrNotFound, "not found")
	}
	return planErr(rel, ErrUnreadable, "unreadable: %s", errText(err))
}

// cutRunes drops a rune split by the size cut, which would otherwise show
// as a replacement character that is not in the file.
func cutRunes(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}
