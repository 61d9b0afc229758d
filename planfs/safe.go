package planfs

// Writes into .plans/ go through internal/safepath: a cloned repository may
// hold symlinks at any path fleetwatch writes, and none may be followed.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/model"
)

// ErrSymlink matches a verb refused because a folder or file it would write
// is a symlink (or not what it should be); faces exit 2 on it.
var ErrSymlink = safepath.ErrSymlink

// logsIgnore keeps the event log out of git without touching a tracked file.
// It names itself too, so scaffold or the first event leaves no untracked
// file behind; anchor's tracked logs/*.csv stay visible to git.
const logsIgnore = "# fleetwatch's event log: local to this checkout\n.gitignore\nevents.jsonl\n"

// root is the project root symlink checks start below.
func (t *Tree) root() string {
	if t.realRoot != "" {
		return t.realRoot
	}
	return t.Project
}

// inPlans is rel (relative to .plans/) as a path relative to the project.
func inPlans(rel string) string { return Dir + "/" + rel }

// mkdirPlans makes .plans/<rel> a directory reached without a symlink.
// .plans/ itself is never made: a tree that is gone (an agent deleted it)
// stays gone, and the verb says so.
func (t *Tree) mkdirPlans(rel string) (string, error) {
	if err := t.Writable(); err != nil {
		return "", err
	}
	d, err := safepath.OpenDir(t.root(), Dir, false)
	if err != nil {
		return "", err
	}
	d.Close()
	if _, err := safepath.MkdirAll(t.root(), inPlans(rel)); err != nil {
		return "", err
	}
	return filepath.Join(t.Plans, filepath.FromSlash(rel)), nil
}

// openPlansFile opens .plans/<rel> without following a symlink anywhere
// below the project root.
func (t *Tree) openPlansFile(rel string, flag int) (*os.File, error) {
	return safepath.OpenFile(t.root(), inPlans(rel), flag, 0o644)
}

// logsDir makes logs/ with its own .gitignore, and checks the event log is
// not a symlink.
func (t *Tree) logsDir() error {
	if _, err := t.mkdirPlans("logs"); err != nil {
		return err
	}
	if _, err := safepath.WriteNew(t.root(), inPlans("logs/.gitignore"), []byte(logsIgnore), 0o644); err != nil {
		return err
	}
	return safepath.Check(t.root(), inPlans(EventsFile))
}

// writable checks, before a verb changes anything, that every folder and
// file it may write in .plans/ is reached without a symlink: .leases/, logs/
// and its event log, and the given lanes. Missing folders are created, so a
// refused verb has changed nothing that matters.
func (t *Tree) writable(lanes ...model.Lane) error {
	if err := t.Writable(); err != nil {
		return err
	}
	if _, err := t.mkdirPlans(".leases"); err != nil {
		return err
	}
	if err := safepath.Check(t.root(), inPlans(".leases/"+lockFile)); err != nil {
		return err
	}
	if err := t.logsDir(); err != nil {
		return err
	}
	for _, l := range lanes {
		if _, err := t.laneDir(l); err != nil {
			return err
		}
	}
	return nil
}

// CheckWrites reports, changing nothing, the first path in .plans/ a claim
// would write (.leases/ and its lock, logs/, the event log, in-progress/)
// that is a symlink or a folder that is not one; work-once refuses on it
// before it scans or claims.
func (t *Tree) CheckWrites() error {
	for _, rel := range append(writePaths, string(model.InProgress)) {
		if err := safepath.Check(t.root(), inPlans(rel)); err != nil {
			return err
		}
	}
	return nil
}

// writePaths are the folders and files in .plans/ that verbs write besides
// lanes (Scan already reports a symlinked lane), relative to .plans/.
var writePaths = []string{".leases", ".leases/" + lockFile, "logs", "logs/.gitignore", EventsFile}

// SymlinkProblems reports, without changing anything, every path verbs write
// in .plans/ that is a symlink, or a folder that is not one: each makes
// verbs refuse with exit 2. Symlinked lease files show up as corrupt leases.
func (t *Tree) SymlinkProblems() []model.Warning {
	var out []model.Warning
	seen := map[string]bool{}
	for _, rel := range append([]string{""}, writePaths...) {
		p := Dir
		if rel != "" {
			p = inPlans(rel)
		}
		err := safepath.Check(t.root(), p)
		var se *safepath.Error
		if err == nil || !errors.As(err, &se) || seen[se.Rel] {
			continue
		}
		seen[se.Rel] = true
		file := strings.TrimPrefix(se.Rel, Dir+"/")
		if file == Dir {
			file = Dir + "/"
		}
		out = append(out, model.Warning{File: file, Message: se.Reason() + " (verbs refuse to write there)"})
	}
	return out
}
