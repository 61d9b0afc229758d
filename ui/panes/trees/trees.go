// Package trees is the cockpit's Worktrees pane: each agent's checkout as
// git sees it (its branch, state, ahead and behind), its detail and its
// diff.
package trees

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// Pane is the Worktrees pane: each agent's checkout as git sees it.
type Pane struct {
	kit.Table
	kit.Filter
	id    uictx.PaneID // its place in the tab order
	rows  []look.WorktreeState
	err   error
	shown []int // the rows the filter lets through
	cols  treeCols
}

func (t *Pane) Rebuild(pc *uictx.Ctx) {
	f := t.Needle()
	t.shown = t.shown[:0]
	for i := range t.rows {
		s := &t.rows[i]
		if kit.AnyContains(f, s.AgentID, s.Branch, s.Head, s.Path, s.Err) {
			t.shown = append(t.shown, i)
		}
	}
	keys := make([]string, len(t.shown))
	for i, j := range t.shown {
		keys[i] = t.rows[j].AgentID
	}
	t.cols = treeColumns(t.Width, t.rows, t.shown)
	c := t.cols
	cm := pc.Common
	t.Set(keys, func(i int, sel bool) string {
		return treeLine(cm, &t.rows[t.shown[i]], c, sel)
	})
}

// New is the Worktrees pane at id in the tab order.
func New(id uictx.PaneID) uictx.Pane { return &Pane{id: id} }

// Loaded takes git's look at the worktrees.
func (t *Pane) Loaded(pc *uictx.Ctx, msg tea.Msg) bool {
	w, ok := msg.(uictx.WorktreesMsg)
	if ok {
		t.rows, t.err = w.States, w.Err
		t.Rebuild(pc)
	}
	return ok
}

// Rows are the worktrees as git last saw them.
func (t *Pane) Rows() []look.WorktreeState { return t.rows }

func (t *Pane) Selected() uictx.Selection { return uictx.Selection{} }

func (t *Pane) SyncKeys(pc *uictx.Ctx, set uictx.SetKey) {
	wt := t.row()
	here := pc.Shown == t.id
	set(&pc.Keys.Trees.Diff, here && wt != nil && wt.Exists, "diff: select a worktree that is on disk")
	set(&pc.Keys.Trees.Open, here && t.Cursor < len(t.rows), "open: select a worktree in the worktrees pane (3)")
}

func (t *Pane) Update(pc *uictx.Ctx, msg tea.KeyMsg) (tea.Msg, bool) {
	switch {
	case key.Matches(msg, pc.Keys.Trees.Diff):
		return t.diff(pc), true
	case key.Matches(msg, pc.Keys.Trees.Open):
		return t.open(pc), true
	}
	return nil, false
}

func (t *Pane) View(pc *uictx.Ctx, h int) []string {
	empty := "no agent worktrees under var/worktrees/"
	if t.err != nil {
		empty = "worktrees: " + t.err.Error()
	}
	return pc.TableBox(kit.FilterTitle("Worktrees", &t.Filter), t.cols.header(), &t.Table, h, kit.EmptyText(&t.Filter, empty))
}

type treeCols struct{ agent, branch, port, state, ahead, path int }

// treeColumns sizes the worktrees table for width w and the worktrees
// shown: agent and branch first, the path takes what is left.
func treeColumns(w int, rows []look.WorktreeState, shown []int) treeCols {
	agent, branch := len("agent"), len("branch")
	for _, j := range shown {
		agent, branch = max(agent, kit.CellWidth(rows[j].AgentID)), max(branch, kit.CellWidth(TreeBranch(&rows[j])))
	}
	c := treeCols{state: 8, ahead: 9}
	room := w - kit.Lead + 1 - (c.state + 1) - (c.ahead + 1)
	room = kit.Allot(room, kit.Col(&c.agent, agent, 8, 24), kit.Col(&c.branch, branch, 10, 48))
	if w >= 100 {
		room = kit.Allot(room, kit.Col(&c.port, 5, 5, 5))
	}
	c.path = max(0, room-1)
	return c
}

func TreeBranch(s *look.WorktreeState) string {
	if s.Head != "" {
		return s.Head
	}
	return s.Branch
}

func (c treeCols) header() string {
	return strings.Repeat(" ", kit.Lead) + kit.Fit("agent", c.agent) + " " + kit.Fit("branch", c.branch) + " " + kit.Cell("port", c.port) +
		kit.Fit("state", c.state) + " " + kit.Fit("vs integ", c.ahead) + " " + kit.Fit("path", c.path)
}

// treeLine is a worktree's row, not yet highlighted (kit.Table highlights the selected one).
func treeLine(cm *uictx.Common, s *look.WorktreeState, c treeCols, selected bool) string {
	plain := cm.Plain
	var b strings.Builder
	b.WriteString(kit.Gutter(selected))
	state, bad := "clean", false
	switch {
	case s.Err != "":
		state, bad = "error", true
	case !s.Exists:
		state, bad = "missing", true
	case s.Dirty:
		state, bad = "dirty", true
	}
	mark := "●"
	if bad {
		mark = "✗"
	}
	if !plain {
		if bad {
			mark = cm.St.Warn.Render(mark)
		} else {
			mark = cm.St.Good.Render(mark)
		}
	}
	b.WriteString(mark + " ")
	branch := TreeBranch(s)
	port := "-"
	if s.Port > 0 {
		port = kit.Itoa(s.Port)
	}
	b.WriteString(kit.Fit(termtext.Line(s.AgentID), c.agent) + " " + kit.Fit(termtext.Line(branch), c.branch) + " " + kit.Cell(port, c.port) + kit.Fit(state, c.state) + " ")
	ahead := ""
	if s.Exists && s.Err == "" {
		ahead = "↑" + kit.Itoa(s.Ahead) + " ↓" + kit.Itoa(s.Behind)
	}
	b.WriteString(kit.Fit(ahead, c.ahead) + " ")
	path := s.Path
	if rel, ok := strings.CutPrefix(path, cm.Opt.Tree.Project+"/"); ok {
		path = rel
	}
	if s.Err != "" {
		path = s.Err
	}
	b.WriteString(kit.Fit(termtext.Line(path), c.path))
	return b.String()
}

// row is the selected worktree, nil when there is none.
func (t *Pane) row() *look.WorktreeState {
	if t.Cursor >= len(t.rows) {
		return nil
	}
	return &t.rows[t.Cursor]
}

// open shows the selected worktree as git sees it now.
func (t *Pane) open(pc *uictx.Ctx) tea.Msg {
	if t.Cursor >= len(t.rows) {
		return nil
	}
	agent, project := t.rows[t.Cursor].AgentID, pc.Opt.Tree.Project
	return uictx.Detail("tree:"+agent, "worktree · "+agent, func() func(*uictx.Ctx) []string {
		w, err := look.ReadWorktreeDetail(project, agent)
		return func(pc *uictx.Ctx) []string { return treeDetail(pc.Common, w, err) }
	})
}

func treeDetail(cm *uictx.Common, w look.WorktreeDetail, err error) []string {
	d := &uictx.DetailText{C: cm}
	d.Heading("Worktree")
	if err != nil {
		d.Note(cm.ProjectRel(err.Error()))
		return d.Lines
	}
	d.Field("agent", w.AgentID)
	d.Field("path", cm.ProjectRel(w.Path))
	d.Field("branch", w.Branch)
	if w.Head != "" && w.Head != w.Branch {
		d.Field("checked out", w.Head)
	}
	port := "none"
	if w.Port > 0 {
		port = kit.Itoa(w.Port)
	}
	d.Field("port", port)
	switch {
	case !w.Exists:
		d.Note("the folder is gone; the registry still names it")
		return d.Lines
	case w.Err != "":
		d.Field("git", cm.ProjectRel(w.Err))
	default:
		d.Field("integration", w.Base)
		d.Field("ahead/behind", kit.Itoa(w.Ahead)+" ahead, "+kit.Itoa(w.Behind)+" behind "+w.Base)
	}
	d.Heading("git status --short --branch")
	gitOut(d, w.Status, w.StatusErr)
	d.Heading("git log --oneline -n 10")
	gitOut(d, w.Log, w.LogErr)
	return d.Lines
}

func gitOut(d *uictx.DetailText, out, err string) {
	if err != "" {
		d.Note(d.C.ProjectRel(err))
		return
	}
	d.Block(out)
}

// diff is `d`: the selected worktree's change.
func (t *Pane) diff(pc *uictx.Ctx) tea.Msg {
	wt := t.row()
	if wt == nil {
		return nil
	}
	project, dir := pc.Opt.Tree.Project, wt.Path
	return uictx.Diff("worktree "+termtext.Line(wt.AgentID), "tree\x00"+dir, func() (look.Diff, error) {
		return look.DiffOfWorktree(project, dir)
	})
}
