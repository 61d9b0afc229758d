package tree

// Everything workers write in a project (var/, var/fleet/*, var/worktrees/)
// goes through internal/safepath: var/ can be committed, so a cloned
// repository may hold a symlink at any of those paths, and none may be
// followed out of the project.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// RelIn is p, a path inside project, relative to it with slashes.
func RelIn(project, p string) (string, error) {
	rel, err := filepath.Rel(project, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not inside %s", p, project)
	}
	return filepath.ToSlash(rel), nil
}

// MkdirIn makes the folder p inside project, every component reached
// without a symlink; var/ gets its .gitignore the first time.
func MkdirIn(project, p string) error {
	rel, err := RelIn(project, p)
	if err != nil {
		return err
	}
	if rel == "var" || strings.HasPrefix(rel, "var/") {
		if err := planfs.IgnoreVar(project); err != nil {
			return err
		}
	}
	_, err = safepath.MkdirAll(project, rel)
	return err
}

// OpenIn opens the file p inside project like os.OpenFile, creating its
// folder with O_CREATE, never through a symlink.
func OpenIn(project, p string, flag int) (*os.File, error) {
	if err := MkdirIn(project, filepath.Dir(p)); err != nil {
		return nil, err
	}
	rel, err := RelIn(project, p)
	if err != nil {
		return nil, err
	}
	return safepath.OpenFile(project, rel, flag, 0o644)
}

// WriteAtomicIn replaces the file p inside project whole, its folder made
// and reached without a symlink.
func WriteAtomicIn(project, p string, data []byte) error {
	if err := MkdirIn(project, filepath.Dir(p)); err != nil {
		return err
	}
	rel, err := RelIn(project, filepath.Dir(p))
	if err != nil {
		return err
	}
	d, err := safepath.OpenDir(project, rel, false)
	if err != nil {
		return err
	}
	defer d.Close()
	return atomicfile.WriteAt(d, filepath.Base(p), data, 0o644)
}

// FleetDir makes var/fleet/ and keeps git out of it with its own
// .gitignore (and var/'s), so worker state never shows up as untracked
// files even in a project whose .gitignore does not list var/. A symlink on
// the way is refused, never followed.
func FleetDir(project string) error {
	if err := MkdirIn(project, filepath.Join(project, "var", "fleet")); err != nil {
		return err
	}
	_, err := safepath.WriteNew(project, "var/fleet/.gitignore", []byte("# worker state and logs (fleetwatch)\n*\n"), 0o644)
	return err
}
