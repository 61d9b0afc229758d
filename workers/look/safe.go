package look

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// varPaths are the folders and files under var/ that workers write, relative
// to the project (worktrees and ports at the git top level).
var varPaths = []string{
	"var", "var/.gitignore", "var/fleet", "var/fleet/.gitignore", LogDir, StateDir,
	"var/worktrees", "var/worktrees/.lock", tree.RegistryFile, PortsFile,
}

// CheckWrites reports, changing nothing, the first path a worker for
// agentID would write under var/ that is a symlink (or a folder on the way
// that is not one): work-once refuses before it claims anything.
func CheckWrites(project, agentID string) error {
	paths := append([]string(nil), varPaths...)
	if agentID != "" {
		id := tree.SafeID(agentID)
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
