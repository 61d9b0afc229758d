package planfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"fleetwatch/model"
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

// Scaffold creates a .plans/ tree in project with every lane, a README and a
// .gitignore, and ANCHOR-CONVENTIONS.md naming the default orchestrator when
// the project has no conventions file, keeping whatever already exists. It returns the paths it made.
func Scaffold(project string) ([]string, error) {
	root := filepath.Join(project, Dir)
	var made []string
	mkdir := func(p string) error {
		if _, err := os.Stat(p); err == nil {
			return nil
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			return fmt.Errorf("cannot create %s: %v", p, errText(err))
		}
		made = append(made, p)
		return nil
	}
	write := func(p, content string) error {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cannot create %s: %v", p, errText(err))
		}
		_, err = f.WriteString(content)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("cannot write %s: %v", p, errText(err))
		}
		made = append(made, p)
		return nil
	}
	if err := mkdir(root); err != nil {
		return made, err
	}
	for _, l := range model.Lanes {
		if err := mkdir(filepath.Join(root, string(l))); err != nil {
			return made, err
		}
		// Empty lanes must survive a git clone.
		if err := write(filepath.Join(root, string(l), ".gitkeep"), ""); err != nil {
			return made, err
		}
	}
	for _, d := range []string{".leases", "logs"} {
		if err := mkdir(filepath.Join(root, d)); err != nil {
			return made, err
		}
	}
	if err := write(filepath.Join(root, "README.md"), scaffoldReadme); err != nil {
		return made, err
	}
	if err := write(filepath.Join(root, ".gitignore"), scaffoldGitignore); err != nil {
		return made, err
	}
	conv, err := ensureConventions(project)
	if conv != "" && err == nil {
		made = append(made, conv)
	}
	return made, err
}
