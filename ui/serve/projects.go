package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui"
)

// Project is one of several projects served (Options.Projects); one of
// them is Options.Root, whose host key the server uses.
type Project struct {
	Name, Root string
	// Claims is the project's remote claims backend; nil for its lease
	// files. Its owner closes it.
	Claims      *claims.Opened
	Uncontained string
	// StuckAfter is Options.StuckAfter for this project.
	StuckAfter time.Duration
	// Problem is why the project could not be opened (a missing root):
	// the overview says so to the keys with a role on it.
	Problem string
}

// servedProject is a project served beside others, with its own hub.
type servedProject struct {
	Project
	tree *planfs.Tree
	hub  *ui.Hub
}

// scope is a set of a key's lines: whether there is one, and the
// projects their projects= name (nil: every project).
type scope struct {
	listed bool
	names  []string
}

func (c scope) equal(o scope) bool { return c.listed == o.listed && slices.Equal(c.names, o.names) }

func (c scope) covers(project string) bool {
	return c.listed && (c.names == nil || slices.Contains(c.names, project))
}

// Role is what a key may do on one of several projects.
type Role int

const (
	NoRole       Role = iota // the project is not shown to the key
	ViewerRole               // it sees, and acts on nothing
	OperatorRole             // it acts
)

// RoleOn is the key's role on the project named project, when several are
// served (grants.go): none unless a line the session uses covers the
// project; then a viewer where any of its viewers lines does (as with one
// project, the viewers file wins), else an operator.
func (id Identity) RoleOn(project string) Role {
	switch {
	case !id.uses.covers(project):
		return NoRole
	case id.views.covers(project):
		return ViewerRole
	}
	return OperatorRole
}

// projectNames reads projects="a,b": the names, trimmed, none empty.
func projectNames(value string) []string {
	var out []string
	for _, n := range strings.Split(value, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// openServed opens the projects beside the server's own (Root, whose tree
// and hub the server has): a hub each.
func (s *server) openServed() error {
	for _, p := range s.opt.Projects {
		sp := servedProject{Project: p}
		switch {
		case p.Problem == "" && filepath.Clean(p.Root) == s.tree.Project:
			sp.tree, sp.hub, sp.Claims = s.tree, s.hub, s.opt.Claims
		case p.Problem == "":
			t, err := planfs.Open(p.Root)
			if err == nil {
				sp.tree = t
				sp.hub, err = ui.NewHubClaims(t, p.Claims)
			}
			if err != nil {
				s.closeServed()
				return fmt.Errorf("%s: %v", p.Name, err)
			}
		}
		s.several = append(s.several, sp)
	}
	return nil
}

// closeServed closes the hubs openServed made.
func (s *server) closeServed() {
	for _, sp := range s.several {
		if sp.hub != nil && sp.hub != s.hub {
			_ = sp.hub.Close()
		}
	}
}

// visible are the projects id has a role on, with the role.
func (s *server) visible(id Identity) (out []servedProject, roles []Role) {
	for _, sp := range s.several {
		if r := id.RoleOn(sp.Name); r != NoRole {
			out, roles = append(out, sp), append(roles, r)
		}
	}
	return out, roles
}

// errNoProject is a key with no role on any project served.
var errNoProject = errors.New("this key has no role on any project served here")

// severalModel is the cockpit over the projects id may see, each on the
// server's hub for it, read-only where id is a viewer.
func (s *server) severalModel(id Identity, opt ui.Options) (tea.Model, func(), error) {
	sps, roles := s.visible(id)
	if len(sps) == 0 {
		return nil, nil, errNoProject
	}
	list := make([]ui.Project, len(sps))
	for i, sp := range sps {
		o := opt
		o.Hub, o.Claims, o.Uncontained, o.ReadOnly = sp.hub, sp.Claims, sp.Uncontained, roles[i] == ViewerRole
		o.StuckAfter = sp.StuckAfter
		list[i] = ui.Project{Name: sp.Name, Root: sp.Root, Options: o, Problem: sp.Problem}
		if sp.tree == nil {
			continue
		}
		t, err := treeFor(sp.tree.Project, id, roles[i] == ViewerRole)
		if err != nil {
			list[i].Problem = err.Error()
			continue
		}
		list[i].Options.Tree = t
	}
	p := ui.NewProjects(list)
	return p, p.Close, nil
}

// boards writes the board of each project id may see, under its name, or
// for `board --json` one JSON document naming each (severalJSON).
func (s *server) boards(w io.Writer, id Identity, cmd []string) error {
	sps, roles := s.visible(id)
	if len(sps) == 0 {
		return errNoProject
	}
	if strings.Join(cmd, " ") == "board --json" {
		return s.boardsJSON(w, id, sps, roles)
	}
	for i, sp := range sps {
		fmt.Fprintf(w, "== %s ==\n", clean(sp.Name))
		if sp.tree == nil {
			fmt.Fprintf(w, "not open: %s\n\n", clean(sp.Problem))
			continue
		}
		t, err := treeFor(sp.tree.Project, id, roles[i] == ViewerRole)
		if err == nil {
			err = writeBoard(w, t, sp.Claims, cmd)
		}
		if err != nil {
			return fmt.Errorf("%s: %v", sp.Name, err)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// severalJSON is `board --json` when several projects are served: each
// project the key may see, in the order served, with its role and either
// its board (one project's `board --json` document) or why it has none.
type severalJSON struct {
	Projects []projectJSON `json:"projects"`
}

type projectJSON struct {
	Name    string          `json:"name"`
	Role    string          `json:"role"`
	Board   json.RawMessage `json:"board,omitempty"`
	Problem string          `json:"problem,omitempty"`
}

// boardsJSON writes severalJSON. A project whose board cannot be read says
// why in its problem and the others are still answered: one broken tree
// does not blind a script to the rest.
func (s *server) boardsJSON(w io.Writer, id Identity, sps []servedProject, roles []Role) error {
	var doc severalJSON
	for i, sp := range sps {
		p := projectJSON{Name: sp.Name, Role: "operator"}
		if roles[i] == ViewerRole {
			p.Role = "viewer"
		}
		if sp.tree == nil {
			p.Problem = "not open: " + sp.Problem
			doc.Projects = append(doc.Projects, p)
			continue
		}
		var b bytes.Buffer
		t, err := treeFor(sp.tree.Project, id, roles[i] == ViewerRole)
		if err == nil {
			err = writeBoard(&b, t, sp.Claims, []string{"board", "--json"})
		}
		if err != nil {
			p.Problem = err.Error()
		} else {
			p.Board = bytes.TrimSpace(b.Bytes())
		}
		doc.Projects = append(doc.Projects, p)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// shown are the roots of the projects id's sessions show.
func (s *server) shown(id Identity) []string {
	if len(s.several) == 0 {
		return []string{s.tree.Project}
	}
	sps, _ := s.visible(id)
	var out []string
	for _, sp := range sps {
		if sp.tree != nil {
			out = append(out, sp.tree.Project)
		}
	}
	return out
}

// roots are the projects served that opened.
func (s *server) roots() []string {
	if len(s.several) == 0 {
		return []string{s.tree.Project}
	}
	var out []string
	for _, sp := range s.several {
		if sp.tree != nil {
			out = append(out, sp.tree.Project)
		}
	}
	return out
}

// workerLog answers `log AGENT [N]`: the agent's log in the first project id
// may see that has one.
func (s *server) workerLog(w io.Writer, id Identity, args []string) error {
	if len(s.several) == 0 {
		t, err := s.sessionTree(id)
		if err != nil {
			return err
		}
		return writeLog(w, t.Project, args)
	}
	sps, _ := s.visible(id)
	var err error = errNoProject
	for _, sp := range sps {
		if sp.tree == nil {
			continue
		}
		if err = writeLog(w, sp.tree.Project, args); err == nil {
			return nil
		}
	}
	return err
}
