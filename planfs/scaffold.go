package planfs

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fleetwatch/fleetwatch/internal/safepath"

	"github.com/fleetwatch/fleetwatch/model"
)

const scaffoldReadme = `# Plans

Each plan is one markdown file; the lane it sits in is its state.

| lane | meaning |
|---|---|
| drafts/ | being written; no worker looks here |
| bugs/, features/ | ready: workers pick from here, bugs first |
| in-progress/ | claimed by a worker (see .leases/) |
| review-needed/ | done by an agent, waiting for a person |
| ambiguous/, blocked/ | set aside: unclear, or cannot proceed |
| completed/ | finished |

A plan's header:

    # Fix the login timeout

    - **Value:** high
    - **Priority:** P1            # P1 > P2 > P3; default P2
    - **Preferred models:** mid, Qwen3 32B
    - **Assignee:** ai            # a person's name keeps agents away
    - **Depends on:** other-slug  # or none

    ## Done when
    - ...

` + "`fleetwatch work-once --list --tier mid`" + ` shows what a mid-tier worker would take next.
`

const scaffoldGitignore = "*.local.md\n.leases/\n"

// VarIgnore is var/.gitignore: it ignores everything in var/, itself
// included, so worktrees, worker state and logs never show as untracked
// files and no tracked .gitignore is edited.
const VarIgnore = "# agent worktrees and fleet state (fleetwatch)\n*\n"

// IgnoreVar makes var/ (when missing) and writes its .gitignore unless there
// is one; a symlinked var/ is refused, never followed.
func IgnoreVar(project string) error {
	_, err := safepath.WriteNew(project, "var/.gitignore", []byte(VarIgnore), 0o644)
	return err
}

// Scaffold creates a .plans/ tree in project with every lane, a README and a
// .gitignore, and ANCHOR-CONVENTIONS.md naming the default orchestrator when
// the project has no conventions file, keeping whatever already exists. It
// returns the paths it made. Nothing is written through a symlink below
// project.
func Scaffold(project string) ([]string, error) {
	real, err := projectFolder(project)
	if err != nil {
		return nil, err
	}
	sc := &scaffolder{project: project, real: real}
	if err := sc.folders(); err != nil {
		return sc.made, err
	}
	for _, f := range []struct{ rel, text string }{
		{Dir + "/README.md", scaffoldReadme},
		{Dir + "/.gitignore", scaffoldGitignore},
		{Dir + "/logs/.gitignore", logsIgnore},
		{"var/.gitignore", VarIgnore},
	} {
		if err := sc.write(f.rel, f.text); err != nil {
			return sc.made, err
		}
	}
	conv, err := ensureConventions(real)
	if conv != "" && err == nil {
		sc.made = append(sc.made, filepath.Join(project, filepath.Base(conv)))
	}
	return sc.made, err
}

// projectFolder makes the project folder if need be and resolves it: the
// folder is the operator's choice, so its symlinks are taken once.
func projectFolder(project string) (string, error) {
	abs, err := filepath.Abs(project)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("cannot create %s: %v", project, errText(err))
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v", project, errText(err))
	}
	return real, nil
}

// scaffolder makes what is missing under real (project resolved), never
// through a symlink below it, and lists what it made by project's path.
type scaffolder struct {
	project, real string
	made          []string
}

// folders makes .plans/, each lane (kept by a .gitkeep), .leases/ and logs/.
func (sc *scaffolder) folders() error {
	if err := sc.mkdir(Dir); err != nil {
		return err
	}
	for _, l := range model.Lanes {
		if err := sc.mkdir(Dir + "/" + string(l)); err != nil {
			return err
		}
		// Empty lanes must survive a git clone.
		if err := sc.write(Dir+"/"+string(l)+"/.gitkeep", ""); err != nil {
			return err
		}
	}
	for _, d := range []string{".leases", "logs"} {
		if err := sc.mkdir(Dir + "/" + d); err != nil {
			return err
		}
	}
	return nil
}

func (sc *scaffolder) mkdir(rel string) error {
	_, statErr := os.Lstat(filepath.Join(sc.real, filepath.FromSlash(rel)))
	if _, err := safepath.MkdirAll(sc.real, rel); err != nil {
		return fmt.Errorf("cannot create %v", err)
	}
	if statErr != nil {
		sc.made = append(sc.made, filepath.Join(sc.project, filepath.FromSlash(rel)))
	}
	return nil
}

func (sc *scaffolder) write(rel, content string) error {
	wrote, err := safepath.WriteNew(sc.real, rel, []byte(content), 0o644)
	if err != nil {
		return fmt.Errorf("cannot write %v", err)
	}
	if wrote {
		sc.made = append(sc.made, filepath.Join(sc.project, filepath.FromSlash(rel)))
	}
	return nil
}
