package workers

// Everything workers write in a project (var/, var/fleet/*, var/worktrees/)
// goes through internal/safepath: var/ can be committed, so a cloned
// repository may hold a symlink at any of those paths, and none may be
// followed out of the project.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// relIn is p, a path inside project, relative to it with slashes.
func relIn(project, p string) (string, error) {
	rel, err := filepath.Rel(project, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not inside %s", p, project)
	}
	return filepath.ToSlash(rel), nil
}

// mkdirIn makes the folder p inside project, every component reached
// without a symlink; var/ gets its .gitignore the first time.
func mkdirIn(project, p string) error {
	rel, err := relIn(project, p)
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

// openIn opens the file p inside project like os.OpenFile, creating its
// folder with O_CREATE, never through a symlink.
func openIn(project, p string, flag int) (*os.File, error) {
	if err := mkdirIn(project, filepath.Dir(p)); err != nil {
		return nil, err
	}
	rel, err := relIn(project, p)
	if err != nil {
		return nil, err
	}
	return safepath.OpenFile(project, rel, flag, 0o644)
}

// writeAtomicIn replaces the file p inside project whole, its folder made
// and reached without a symlink.
func writeAtomicIn(project, p string, data []byte) error {
	if err := mkdirIn(project, filepath.Dir(p)); err != nil {
		return err
	}
	rel, err := relIn(project, filepath.Dir(p))
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

// varPaths are the folders and files under var/ that workers write, relative
// to the project (worktrees and ports at the git top level).
var varPaths = []string{
	"var", "var/.gitignore", "var/fleet", "var/fleet/.gitignore", LogDir, StateDir,
	"var/worktrees", "var/worktrees/.lock", registryFile, portsFile,
}

// CheckWrites reports, changing nothing, the first path a worker for
// agentID would write under var/ that is a symlink (or a folder on the way
// that is not one): work-once refuses before it claims anything.
func CheckWrites(project, agentID string) error {
	paths := append([]string(nil), varPaths...)
	if agentID != "" {
		id := SafeID(agentID)
		paths = append(paths, LogDir+"/"+id+".log", LogDir+"/"+id+".log.1", StateDir+"/"+id+".json", StateDir+"/"+id+".lock")
	}
	// The project only, no git lookup: a worktree at another top level is
	// refused by the write itself.
	for _, rel := range paths {
		if err := safepath.Check(project, rel); err != nil {
			return err
		}
	}
	return nil
}

// homes are the roots var/ sits in: the project, and its git top level when
// that differs (worktrees and ports live there). The top level is the
// nearest folder upwards with a .git, found without starting git: the UI
// asks on every refresh, and a listing starts git once, for dependencies.
func homes(project string) []string {
	out := []string{project}
	abs, err := filepath.Abs(project)
	if err != nil {
		return out
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if d != abs {
				out = append(out, d)
			}
			return out
		}
		if filepath.Dir(d) == d {
			return out
		}
	}
}

// SymlinkProblems lists, changing nothing, every path under var/ workers
// write that is a symlink, any worker's log, state or lock file included,
// each named relative to the project.
func SymlinkProblems(project string) []model.Warning {
	var out []model.Warning
	seen := map[string]bool{}
	add := func(err error) {
		var se *safepath.Error
		if errors.As(err, &se) && !seen[se.Rel] {
			seen[se.Rel] = true
			out = append(out, model.Warning{File: se.Rel, Message: se.Reason() + " (workers refuse to write there)"})
		}
	}
	for _, home := range homes(project) {
		for _, rel := range varPaths {
			add(safepath.Check(home, rel))
		}
		for _, dir := range []string{LogDir, StateDir} {
			if safepath.Check(home, dir) != nil {
				continue
			}
			entries, _ := os.ReadDir(filepath.Join(home, filepath.FromSlash(dir)))
			for _, e := range entries {
				if e.Type()&os.ModeSymlink != 0 {
					add(safepath.Check(home, dir+"/"+e.Name()))
				}
			}
		}
	}
	return out
}
