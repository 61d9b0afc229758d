package planfs

// Editing a plan hands the operator's editor a copy, never the plan itself:
// an editor writes the way it likes (in place, rename over, backup files),
// and a worker may claim (move) the plan while the editor is open. The copy
// goes back only if the plan is still where it was and still holds what was
// copied; otherwise the copy is kept and named, so nothing typed is lost.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/model"
)

// ErrEditKept matches a write-back refused with the edited copy kept.
var ErrEditKept = errors.New("edit not written back; the copy is kept")

// maxEditSize bounds the plan an editor is handed, and its copy read back.
const maxEditSize = 4 << 20

// EditCopy is a plan copied out for an editor.
type EditCopy struct {
	Rel  string // the plan in the tree
	Path string // the copy the editor works on, named after the plan
	orig []byte
	mode os.FileMode
}

// CopyForEdit copies the plan at rel into a private temporary folder, as
// <plan name>, so the editor shows which plan it is.
func (t *Tree) CopyForEdit(rel string) (*EditCopy, error) {
	if err := t.refuse(rel); err != nil {
		return nil, err
	}
	if _, _, err := SplitRel(rel); err != nil {
		return nil, planErr(rel, ErrBadTarget, "%v", err)
	}
	data, mode, err := t.readWhole(rel)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "fleetwatch-edit-")
	if err != nil {
		return nil, planErr(rel, err, "cannot make a copy to edit: %v", errText(err))
	}
	c := &EditCopy{Rel: rel, Path: filepath.Join(dir, model.Rel(rel).Name()), orig: data, mode: mode}
	if err := os.WriteFile(c.Path, data, 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, planErr(rel, err, "cannot make a copy to edit: %v", errText(err))
	}
	return c, nil
}

// readWhole reads the plan at rel without following a symlink.
func (t *Tree) readWhole(rel string) ([]byte, os.FileMode, error) {
	f, err := t.openPlansFile(rel, os.O_RDONLY)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, planErr(rel, ErrNotFound, "not found (it moved or is gone)")
		}
		return nil, 0, planErr(rel, ErrUnreadable, "%v", errText(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, planErr(rel, ErrUnreadable, "%v", errText(err))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxEditSize+1))
	if err != nil {
		return nil, 0, planErr(rel, ErrUnreadable, "%v", errText(err))
	}
	if len(data) > maxEditSize {
		return nil, 0, planErr(rel, ErrUnreadable, "larger than %d MiB; edit it outside fleetwatch", maxEditSize>>20)
	}
	return data, fi.Mode().Perm(), nil
}

// Discard removes the copy and its folder.
func (c *EditCopy) Discard() { os.RemoveAll(filepath.Dir(c.Path)) }

// WriteBack puts the edited copy in the plan's place and removes the copy;
// changed is false when the editor left it as it was. It refuses, keeping
// the copy and naming it, when the plan moved, is gone or changed on disk
// since it was copied, or when the copy is gone or empty.
func (t *Tree) WriteBack(c *EditCopy, agent string) (changed bool, err error) {
	if err := t.refuse(c.Rel); err != nil {
		return false, err
	}
	keep := func(format string, args ...any) error {
		return planErr(c.Rel, ErrEditKept, "%s; your edit is kept in %s", fmt.Sprintf(format, args...), c.Path)
	}
	edited, err := os.ReadFile(c.Path)
	if err != nil {
		return false, planErr(c.Rel, err, "cannot read the edited copy %s: %v", c.Path, errText(err))
	}
	if bytes.Equal(edited, c.orig) {
		c.Discard()
		return false, nil
	}
	if len(bytes.TrimSpace(edited)) == 0 {
		return false, keep("the edited copy is empty, so the plan is left as it was")
	}
	now, _, err := t.readWhole(c.Rel)
	if err != nil {
		return false, keep("it moved or is gone since you opened it")
	}
	if !bytes.Equal(now, c.orig) {
		return false, keep("it changed on disk while you edited it")
	}
	lane := model.Rel(c.Rel).Lane()
	if err := t.writable(lane); err != nil {
		return false, keep("%v", err)
	}
	if err := t.swapIn(c, edited); err != nil {
		return false, keep("%v", err)
	}
	c.Discard()
	t.appendEvent(Event{Event: "edit", Slug: model.Rel(c.Rel).Slug(), From: c.Rel, To: c.Rel, AgentID: agent})
	return true, nil
}

// swapIn writes edited beside the plan and exchanges the two atomically,
// which fails rather than create the plan again if a claim moved it away
// in the meantime; then checks that what came out is what was copied, and
// swaps back if not.
func (t *Tree) swapIn(c *EditCopy, edited []byte) error {
	dst := t.Abs(c.Rel)
	tmp, err := writeTemp(filepath.Dir(dst), "."+model.Rel(c.Rel).Name()+".edit-*", string(edited), time.Time{})
	if err != nil {
		return fmt.Errorf("cannot write: %v", errText(err))
	}
	defer os.Remove(tmp)
	_ = os.Chmod(tmp, c.mode)
	err = renameExchange(tmp, dst)
	switch {
	case renameFlagUnsupported(err):
		// No exchange on this filesystem: the check above is all there is.
		if _, err := os.Lstat(dst); err != nil {
			return errors.New("it moved or is gone since you opened it")
		}
		return os.Rename(tmp, dst)
	case errors.Is(err, unix.ENOENT):
		return errors.New("it moved or is gone since you opened it")
	case err != nil:
		return fmt.Errorf("cannot write: %v", err)
	}
	out, err := os.ReadFile(tmp)
	if err != nil || !bytes.Equal(out, c.orig) {
		_ = renameExchange(tmp, dst)
		return errors.New("it changed on disk while you edited it")
	}
	syncDir(filepath.Dir(dst))
	return nil
}
