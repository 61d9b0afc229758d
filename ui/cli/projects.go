package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/ui/serve"
)

// severalProjects is the projects a cockpit over several opens, or nil for
// today's cockpit on one project: the roots given when more than one, the
// user's projects.yaml with --projects, or projects.yaml when run outside
// any project (no --root, no $FLEET_ROOT, no .plans/ upwards) and the file
// is there.
func (f *uiFlags) severalProjects() ([]config.Project, error) {
	switch {
	case f.projects && len(f.roots) > 0:
		return nil, errors.New("--projects and --root: give one or the other (--projects opens every project in " + config.ProjectsName + ")")
	case f.projects:
		path, err := config.ProjectsFile()
		if err != nil {
			return nil, err
		}
		ps, err := config.LoadProjects(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("--projects: no %s (list them as projects: [{name: api, root: ~/src/api}])", path)
		}
		return ps, err
	case len(f.roots) > 1:
		return rootProjects(f.roots), nil
	case len(f.roots) == 1 || os.Getenv("FLEET_ROOT") != "" || hasPlans(findRoot("")):
		return nil, nil
	}
	path, err := config.ProjectsFile()
	if err != nil {
		return nil, nil
	}
	ps, err := config.LoadProjects(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return ps, err
}

// rootProjects names each --root by its folder; two folders of one name
// are told apart by their whole path.
func rootProjects(roots []string) []config.Project {
	seen := map[string]int{}
	for _, r := range roots {
		seen[filepath.Base(filepath.Clean(r))]++
	}
	out := make([]config.Project, 0, len(roots))
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			abs = r
		}
		name := filepath.Base(abs)
		if seen[filepath.Base(filepath.Clean(r))] > 1 {
			name = abs
		}
		out = append(out, config.Project{Name: name, Root: abs})
	}
	return out
}

// projectProblem is why a project's root cannot be opened, in one line; ""
// when it can.
func projectProblem(root string) string {
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such folder"
	case err != nil:
		return err.Error()
	case !fi.IsDir():
		return "not a folder"
	}
	return ""
}

// serveSeveral completes serve's options for several projects: each one's
// claims, the first that opens as Root (its host key is the server's); a
// project that cannot be opened is served as a problem row.
func (f *uiFlags) serveSeveral(opt *serve.Options, list []config.Project, stderr io.Writer) (done func(), err error) {
	var closers []func()
	done = func() {
		for _, c := range closers {
			c()
		}
	}
	for _, c := range list {
		p := serve.Project{Name: c.Name, Root: c.Root}
		t, remote, problem := f.openOne(c.Root, stderr)
		if p.Problem = problem; t != nil {
			p.Root, p.Claims, p.Uncontained = t.Project, remote, uncontained(t.Project)
			if remote != nil {
				closers = append(closers, func() { remote.Backend.Close() })
			}
			// Each served project's notices reach a person, session or not.
			stop, stuck, err := sendNotices(t.Project, remote, opt.Terminals, stderr)
			if err != nil {
				done()
				return nil, err
			}
			closers = append([]func(){stop}, closers...)
			p.StuckAfter = stuck
			if opt.Root == "" {
				opt.Root, opt.Claims, opt.Uncontained, opt.StuckAfter = t.Project, remote, p.Uncontained, stuck
			}
		}
		opt.Projects = append(opt.Projects, p)
	}
	if opt.Root == "" {
		done()
		return nil, errors.New("none of the projects could be opened: " + opt.Projects[0].Name + ": " + opt.Projects[0].Problem)
	}
	return done, nil
}
