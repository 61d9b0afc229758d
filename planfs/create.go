package planfs

import (
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

// AddPlan writes a new plan file <lane>/<name> holding text and returns its
// rel. It never overwrites: a name already taken in that lane fails with
// ErrDestExists. Readers see the whole file or none of it.
func (t *Tree) AddPlan(lane model.Lane, name, text string) (string, error) {
	return t.AddPlanAt(lane, name, text, time.Time{})
}

// AddPlanAt is AddPlan with the file's mtime set to mtime (unless zero)
// before the plan appears, so its place in the ready order is chosen, not
// an accident of when it was written.
func (t *Tree) AddPlanAt(lane model.Lane, name, text string, mtime time.Time) (string, error) {
	return t.addPlanAt(lane, name, text, mtime, Event{Event: "create"})
}

// addPlan is AddPlan logging ev (its Slug and To filled in).
func (t *Tree) addPlan(lane model.Lane, name, text string, ev Event) (string, error) {
	return t.addPlanAt(lane, name, text, time.Time{}, ev)
}

func (t *Tree) addPlanAt(lane model.Lane, name, text string, mtime time.Time, ev Event) (string, error) {
	rel := string(model.RelOf(lane, name))
	if err := t.refuse(rel); err != nil {
		return "", err
	}
	if _, known := model.ParseLane(string(lane)); !known {
		return "", planErr(rel, ErrBadTarget, "%q is not a lane", lane)
	}
	if _, _, err := SplitRel(rel); err != nil {
		return "", planErr(rel, ErrBadTarget, "%v", err)
	}
	if err := ValidSlug(model.SlugOf(name)); err != nil {
		return "", planErr(rel, ErrBadTarget, "%v", err)
	}
	if err := t.writable(lane); err != nil {
		return "", planErr(rel, err, "%v", err)
	}
	dir := t.Abs(string(lane))
	if t.exists(rel) {
		return "", planErr(rel, ErrDestExists, "%s already exists", rel)
	}
	// The whole file is written and synced under a name no scan reads (it
	// does not end in .md), then moved into place without replacing.
	tmp, err := writeTemp(dir, "."+name+".create-*", text, mtime)
	if err != nil {
		return "", planErr(rel, err, "cannot write: %v", errText(err))
	}
	if err := moveNoReplace(tmp, t.Abs(rel)); err != nil {
		os.Remove(tmp)
		if errors.Is(err, fs.ErrExist) {
			return "", planErr(rel, ErrDestExists, "%s already exists", rel)
		}
		return "", planErr(rel, err, "cannot create: %v", errText(err))
	}
	ev.Slug, ev.To = model.SlugOf(name), rel
	t.appendEvent(ev)
	return rel, nil
}

// writeTemp creates a new file in dir (O_EXCL, via CreateTemp) holding text,
// synced, mode 0644, with mtime set when not zero, and returns its path.
func writeTemp(dir, pattern, text string, mtime time.Time) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(text)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil && !mtime.IsZero() {
		err = os.Chtimes(f.Name(), mtime, mtime)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
