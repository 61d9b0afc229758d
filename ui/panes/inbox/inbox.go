// Package inbox is the cockpit's Inbox pane: what waits for the
// coordinator (coord.Inbox, read by the root: uictx.Ctx.Inbox), each
// proposal rendered as markdown below the table, and the keys that decide
// (A approves, X rejects with a note); then the runs paused where they are
// (look.PausedRuns, read with the spend: Ctx.Paused), with the keys
// that let one go on (b extends a budget, p resumes a run paused by hand)
// or end it (x); then the runs waiting for input (their state files'
// question, from the workers' reading: Ctx.Workers), which y allows, n
// denies and enter answers (asking.go); then people's comments on the
// forge's PRs (uictx.Thread,
// read with the inbox), which D dismisses (forge.go). The pane never
// decides a state: it shows the engine's entries and asks coord, ledger,
// landing and workers to act.
package inbox

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/spend"
	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/ui/verbs"
	"github.com/fleetwatch/fleetwatch/workers/coord"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/notify"
)

// Pane is the Inbox pane and all its state: the last reading of the
// inbox, each entry's proposal as rendered for the preview, and the
// rows drawn from them.
type Pane struct {
	kit.Table
	kit.Filter
	id      uictx.PaneID  // its place in the tab order
	entries []coord.Entry // the last reading (uictx.Ctx.Inbox)
	texts   []string      // each entry's proposal, rendered at renderW
	pv      [][]string
	renderW int
	err     error
	loaded  bool
	shown   []int // the entries the filter lets through
	// paused are the paused runs the filter lets through, listed after
	// the entries.
	paused []look.State
	// asking are the runs waiting for input the filter lets through,
	// listed after the paused runs (asking.go).
	asking []uictx.WorkerRow
	// threads are the forge's PRs with people's comments, and comments
	// those the filter lets through, listed last (forge.go).
	threads  []uictx.Thread
	comments []comment
	readOnly bool // a viewer's session, whose `?` lists every act refused
	cols     inboxCols
	full     int // the rows the pane has, table and preview
}

// inboxSplit divides the pane's h rows between the table, showing n
// entries, and the preview: the table takes what its rows need, at least
// 3 and at most a third.
func inboxSplit(h, n int) (table, preview int) {
	if h < 12 {
		return h, 0
	}
	table = max(3, min(n, h/3))
	return table, h - table
}

func (l *Pane) SetSize(w, h int) {
	l.full = h
	t, _ := inboxSplit(h, l.rows())
	l.Table.SetSize(w, t)
}

// rows is how many rows the table lists: proposals, paused runs, runs
// waiting for input, comments.
func (l *Pane) rows() int { return len(l.shown) + len(l.paused) + len(l.asking) + len(l.comments) }

// New is the Inbox pane at id in the tab order.
func New(id uictx.PaneID) uictx.Pane { return &Pane{id: id} }

// Entries are the inbox's entries as last read.
func (l *Pane) Entries() []coord.Entry { return l.entries }

func (l *Pane) Rebuild(pc *uictx.Ctx) {
	if l.loaded = pc.Inbox != nil; l.loaded {
		in := pc.Inbox
		l.entries, l.texts, l.renderW, l.err = in.Entries, in.Texts, in.Width, in.Err
		l.threads = in.Threads
	}
	l.readOnly = pc.Opt.ReadOnly
	f := l.Needle()
	l.shown = l.shown[:0]
	for i := range l.entries {
		if e := &l.entries[i]; f == "" || kit.AnyContains(f, e.Slug, e.Rel, e.Title, entryAgent(e), EntryState(e), e.Problem) {
			l.shown = append(l.shown, i)
		}
	}
	l.paused = l.paused[:0]
	for _, st := range pc.Paused {
		if f == "" || kit.AnyContains(f, st.AgentID, kit.PlanSlug(st.Plan), st.Paused) {
			l.paused = append(l.paused, st)
		}
	}
	l.asking = askingRows(pc.Workers, f)
	l.comments = filterComments(l.threads, f)
	keys := make([]string, 0, l.rows())
	for _, j := range l.shown {
		keys = append(keys, l.entries[j].Slug)
	}
	for i := range l.paused {
		keys = append(keys, "paused\x00"+l.paused[i].AgentID)
	}
	for i := range l.asking {
		keys = append(keys, "asking\x00"+l.asking[i].Key())
	}
	for _, c := range l.comments {
		keys = append(keys, "comment\x00"+c.th.Slug+"\x00"+strconv.FormatInt(c.c.ID, 10))
	}
	l.pv = make([][]string, len(l.entries))
	for i := range l.entries {
		l.pv[i] = proposalLines(pc.Common, &l.entries[i], l.textOf(i))
	}
	l.cols = inboxColumns(l.Width, l.entries, l.shown, l.paused, l.asking, l.comments)
	l.SetSize(l.Width, l.full) // the table's share follows its rows
	c, n, np := l.cols, len(l.shown), len(l.shown)+len(l.paused)
	na := np + len(l.asking)
	cm := pc.Common
	l.Set(keys, func(i int, sel bool) string {
		if i >= na {
			return commentLine(cm, &l.comments[i-na], c, sel)
		}
		if i >= np {
			return askingLine(cm, &l.asking[i-np], c, sel)
		}
		if i >= n {
			return pausedLine(cm, &l.paused[i-n], c, sel)
		}
		return inboxLine(cm, &l.entries[l.shown[i]], c, sel)
	})
}

func (l *Pane) textOf(i int) string {
	if i < len(l.texts) {
		return l.texts[i]
	}
	return ""
}

// Row is the selected entry, nil when there is none.
func (l *Pane) Row() *coord.Entry {
	if l.Cursor >= len(l.shown) {
		return nil
	}
	return &l.entries[l.shown[l.Cursor]]
}

// pausedRow is the selected paused run, nil when the cursor is elsewhere.
func (l *Pane) pausedRow() *look.State {
	if i := l.Cursor - len(l.shown); i >= 0 && i < len(l.paused) {
		return &l.paused[i]
	}
	return nil
}

// Selected offers the key map the entry's plan, so N's notices and the
// plan verbs' reasons name it; A and X are the pane's own.
func (l *Pane) Selected() uictx.Selection { return uictx.Selection{} }

func (l *Pane) SyncKeys(pc *uictx.Ctx, set uictx.SetKey) {
	k := &pc.Keys.Inbox
	e := l.Row()
	here := pc.Shown == l.id && e != nil
	ok, why := canDecide(e)
	set(&k.Approve, here && ok, "approve: "+why)
	set(&k.Reject, here && ok, "reject: "+why)
	st := l.pausedRow()
	on := pc.Shown == l.id && st != nil
	cm := pc.Shown == l.id && l.commentRow() != nil
	ask := pc.Shown == l.id && l.askingRow() != nil
	set(&k.Open, here || on || cm || ask, "open: select a proposal or a paused run in the inbox pane (7)")
	l.syncAnswerKeys(pc, set)
	set(&k.Dismiss, cm, "dismiss: select a comment from the forge in the inbox pane (7)")
	ok, why = canExtend(st)
	set(&k.Extend, on && ok, "extend: "+why)
	ok, why = canResume(st)
	set(&k.Resume, on && ok, "resume: "+why)
	ok, why = canStopRun(st)
	set(&k.Stop, on && ok, "stop: "+why)
}

// pickPaused is the reason every paused-run key gives without one.
const pickPaused = "select a paused run in the inbox pane (7)"

// canExtend says whether b applies to st, and why not.
func canExtend(st *look.State) (bool, string) {
	switch {
	case st == nil:
		return false, pickPaused
	case !kit.BudgetPaused(st):
		return false, termtext.Line(st.AgentID) + " was paused by hand, not at its budget: p resumes it"
	case st.Plan == "":
		return false, termtext.Line(st.AgentID) + "'s state file names no plan whose budget to raise"
	}
	return true, ""
}

// canResume says whether p applies to st, and why not.
func canResume(st *look.State) (bool, string) {
	switch {
	case st == nil:
		return false, pickPaused
	case kit.BudgetPaused(st):
		return false, termtext.Line(st.AgentID) + " waits at its budget: b extends it, x stops it"
	case !st.Local():
		return false, termtext.Line(st.AgentID) + " does not run on this machine; resume it there (fleetwatch worker resume)"
	case !st.Pausable:
		return false, termtext.Line(st.AgentID) + "'s driver cannot resume a run (an older fleetwatch, or anchor's)"
	}
	return true, ""
}

// canStopRun says whether x applies to st, and why not.
func canStopRun(st *look.State) (bool, string) {
	switch {
	case st == nil:
		return false, pickPaused
	case !st.Local():
		return false, termtext.Line(st.AgentID) + " does not run on this machine; stop it there (fleetwatch worker stop)"
	}
	return true, ""
}

// canDecide says whether A and X apply to e, and why not.
func canDecide(e *coord.Entry) (bool, string) {
	switch {
	case e == nil:
		return false, "select a proposal in the inbox pane (7)"
	case !e.Waiting():
		return false, termtext.Line(e.Slug) + " is decided already (" + termtext.Line(EntryState(e)) + ")"
	}
	return true, ""
}

func (l *Pane) Update(pc *uictx.Ctx, msg tea.KeyMsg) (tea.Msg, bool) {
	k := &pc.Keys.Inbox
	switch {
	case key.Matches(msg, k.Approve):
		return l.askApprove(pc), true
	case key.Matches(msg, k.Reject):
		return l.askReject(pc), true
	case key.Matches(msg, k.Allow):
		return l.answerYes(pc, false), true
	case key.Matches(msg, k.Deny):
		return l.answerYes(pc, true), true
	case key.Matches(msg, k.Open) && l.askingRow() != nil:
		return l.askAnswer(pc), true
	case key.Matches(msg, k.Open):
		return l.open(pc), true
	case key.Matches(msg, k.Extend):
		return l.askExtend(pc), true
	case key.Matches(msg, k.Resume):
		if st := l.pausedRow(); st != nil {
			if ok, _ := canResume(st); ok {
				return verbs.PauseCmd(*st, false), true
			}
		}
		return nil, true
	case key.Matches(msg, k.Stop):
		return l.askStopRun(pc), true
	case key.Matches(msg, k.Dismiss):
		return l.askDismiss(pc), true
	}
	return nil, false
}

func (l *Pane) View(pc *uictx.Ctx, h int) []string {
	empty := "the inbox is empty: a plan-first plan's proposal waits here for approval, a paused run for a person"
	switch {
	case !l.loaded:
		empty = "reading the inbox…"
	case l.err != nil:
		empty = "⚠ inbox: " + termtext.Line(l.err.Error())
	}
	if _, ph := inboxSplit(l.full, l.rows()); ph == 0 {
		return pc.TableBox(kit.FilterTitle("Inbox", &l.Filter), l.cols.header(), &l.Table, h, kit.EmptyText(&l.Filter, empty))
	}
	th := l.Table.Height + 1 // the header
	if pc.Wide {
		th += 2 // the box's edges
	}
	out := pc.TableBox(kit.FilterTitle("Inbox", &l.Filter), l.cols.header(), &l.Table, th, kit.EmptyText(&l.Filter, empty))
	return append(out, l.proposalBox(pc.Common, h-len(out))...)
}

// proposalBox is the selected proposal below the table: its facts, then
// the text as rendered; enter reads it whole.
func (l *Pane) proposalBox(cm *uictx.Common, h int) []string {
	title, lines := "proposal", []string{cm.St.Dim.Render("no proposal selected")}
	if e := l.Row(); e != nil {
		title = termtext.Line(e.Slug) + " · proposal " + kit.Itoa(e.N)
		lines = l.pv[l.shown[l.Cursor]]
	} else if st := l.pausedRow(); st != nil {
		title = termtext.Line(kit.PlanSlug(st.Plan)) + " · paused run"
		lines = pausedLines(cm, st)
	} else if r := l.askingRow(); r != nil {
		title = termtext.Line(kit.PlanSlug(r.St.Plan)) + " · waiting for input"
		lines = askingLines(cm, r)
	} else if c := l.commentRow(); c != nil {
		title = termtext.Line(c.th.Slug) + " · " + commentState(c)
		lines = commentLines(cm, c)
	}
	hint := ""
	if len(lines) > h-2 {
		hint = "enter to read all"
	}
	if !cm.Wide {
		head := cm.St.Title.Render(title)
		if hint != "" {
			head += "  " + cm.St.Dim.Render(hint)
		}
		return append([]string{head}, lines[:min(len(lines), max(0, h-1))]...)
	}
	shown := make([]string, 0, h)
	for _, s := range lines[:min(len(lines), max(0, h-2))] {
		shown = append(shown, " "+s)
	}
	return cm.Box(title, hint, shown, cm.Cols, h, false)
}

// proposalLines are what the preview and the detail show of e: who wrote
// it, where it stands, its Files in scope, then the rendered text.
func proposalLines(cm *uictx.Common, e *coord.Entry, rendered string) []string {
	line := termtext.Line
	out := []string{line(entryTitle(e) + " · " + EntryState(e))}
	if r := e.Record; r != nil {
		out = append(out, line("written by "+r.AgentID+" in run "+r.RunID+" · sha256 "+kit.Short(r.SHA256)))
	} else {
		out = append(out, "no authorship record beside it")
	}
	if d := e.Decision; d != nil {
		out = append(out, line(d.Verdict+" by "+d.By+" at "+d.At.Local().Format("2006-01-02 15:04")+kit.OrEmpty(" · ", decisionNote(d))))
	}
	if e.Problem != "" {
		p := "⚠ " + line(e.Problem)
		if !cm.Plain {
			p = cm.St.Bad.Render(p)
		}
		out = append(out, p)
	}
	out = append(out, cm.St.Bold.Render("Files in scope:")+" "+cm.St.Dim.Render(scopeCell(e)))
	for _, p := range e.Scope.Patterns {
		out = append(out, "  "+line(p))
	}
	out = append(out, "")
	if rendered != "" {
		// Safe already: renderMarkdown cleaned the source it rendered.
		out = append(out, strings.Split(rendered, "\n")...)
	}
	return out
}

// decisionNote is what a decision adds in words: a rejection's note, an
// approver's edit.
func decisionNote(d *coord.Decision) string {
	switch {
	case d.Note != "":
		return "note: " + d.Note
	case d.Edited:
		return "the approver edited the text; the build follows their version"
	}
	return ""
}

func entryTitle(e *coord.Entry) string {
	if e.Title != "" {
		return e.Slug + ": " + e.Title
	}
	return e.Slug
}

// entryAgent is the agent whose plan it is: the lease's holder, or the
// proposal's author (as the notices name it).
func entryAgent(e *coord.Entry) string { return notify.EntryAgent(e) }

// EntryState is where an entry stands, in words.
func EntryState(e *coord.Entry) string {
	d := e.Decision
	switch {
	case d == nil:
		return "awaiting approval"
	case d.Verdict == coord.Approved:
		return "approved by " + d.By + ", resumes with " + entryAgent(e)
	case d.Verdict == coord.Rejected:
		return "rejected by " + d.By
	}
	return d.Verdict + " by " + d.By
}

// scopeCell is how many files the proposal declares in scope.
func scopeCell(e *coord.Entry) string {
	if !e.ScopeFound {
		return "no scope"
	}
	return kit.Plural(len(e.Scope.Patterns), "file", "files")
}

// entryAt is when the proposal was written (Unix seconds), 0 when unknown.
func entryAt(e *coord.Entry) float64 {
	switch {
	case e.Record != nil && !e.Record.At.IsZero():
		return float64(e.Record.At.UnixNano()) / 1e9
	case e.Lease != nil:
		return e.Lease.ClaimedAt
	}
	return 0
}

type inboxCols struct{ slug, agent, n, state, age, scope, problem int }

// inboxColumns sizes the table for width w and the entries shown: the
// state first, then the slug and the agent; the problem takes the rest.
func inboxColumns(w int, es []coord.Entry, shown []int, paused []look.State, asking []uictx.WorkerRow, cs []comment) inboxCols {
	slug, agent, state, scope := len("slug"), len("agent"), len("state"), len("scope")
	for _, j := range shown {
		e := &es[j]
		slug, agent = max(slug, kit.CellWidth(e.Slug)), max(agent, kit.CellWidth(entryAgent(e)))
		state, scope = max(state, kit.CellWidth(EntryState(e))), max(scope, kit.CellWidth(scopeCell(e)))
	}
	for i := range paused {
		st := &paused[i]
		slug, agent = max(slug, kit.CellWidth(kit.PlanSlug(st.Plan))), max(agent, kit.CellWidth(st.AgentID))
		state, scope = max(state, kit.CellWidth(pausedState(st))), max(scope, kit.CellWidth(kit.USD(st.Spent.USD)))
	}
	askingWidths(asking, &slug, &agent, &state, &scope)
	commentWidths(cs, &slug, &agent, &state)
	c := inboxCols{n: 2, age: 5}
	room := w - 2 - (c.n + 1) - (c.age + 1)
	room = kit.Allot(room, kit.Col(&c.state, state, 17, 64), kit.Col(&c.slug, slug, 8, 32), kit.Col(&c.agent, agent, 6, 20),
		kit.Col(&c.scope, scope, 8, 10))
	c.problem = max(0, room-1)
	return c
}

func (c inboxCols) header() string {
	h := "  " + kit.Fit("slug", c.slug) + " " + kit.Fit("agent", c.agent) + " " + kit.Fit("#", c.n) + " " + kit.Fit("state", c.state) + " " + kit.Fit("age", c.age) + " "
	if c.scope > 0 {
		h += kit.Fit("scope", c.scope) + " "
	}
	return h + kit.Fit("problem", c.problem)
}

// inboxLine is an entry's row, not yet highlighted (kit.Table highlights the selected one).
func inboxLine(cm *uictx.Common, e *coord.Entry, c inboxCols, selected bool) string {
	var b strings.Builder
	b.WriteString(kit.Gutter(selected))
	b.WriteString(kit.Fit(termtext.Line(e.Slug), c.slug) + " ")
	b.WriteString(kit.Fit(termtext.Line(entryAgent(e)), c.agent) + " ")
	b.WriteString(kit.FitRight(kit.Itoa(e.N), c.n) + " ")
	state := kit.Fit(termtext.Line(EntryState(e)), c.state)
	if !cm.Plain && e.Waiting() {
		state = cm.St.Warn.Render(state)
	}
	b.WriteString(state + " ")
	age := "—"
	if at := entryAt(e); at > 0 {
		age = kit.Coarse(cm.Now - at)
	}
	b.WriteString(kit.Fit(age, c.age) + " ")
	if c.scope > 0 {
		b.WriteString(kit.Fit(scopeCell(e), c.scope) + " ")
	}
	problem := kit.Fit(termtext.Line(e.Problem), c.problem)
	if !cm.Plain && e.Problem != "" {
		problem = cm.St.Bad.Render(problem)
	}
	b.WriteString(problem)
	return b.String()
}

// pausedState is a paused run's state cell: why it waits, in a few words.
func pausedState(st *look.State) string {
	head, _, _ := strings.Cut(st.Paused, ":")
	return "⏸ " + head
}

// pausedLine is a paused run's row in the inbox's columns: its plan, its
// agent, why it waits and since when, what it spent, and the budget's
// words (or what the run has spent, for one paused by hand).
func pausedLine(cm *uictx.Common, st *look.State, c inboxCols, selected bool) string {
	var b strings.Builder
	b.WriteString(kit.Gutter(selected))
	b.WriteString(kit.Fit(termtext.Line(kit.PlanSlug(st.Plan)), c.slug) + " ")
	b.WriteString(kit.Fit(termtext.Line(st.AgentID), c.agent) + " ")
	b.WriteString(kit.FitRight("", c.n) + " ")
	state := kit.Fit(termtext.Line(pausedState(st)), c.state)
	if !cm.Plain {
		state = cm.St.Warn.Render(state)
	}
	b.WriteString(state + " ")
	age := "—"
	if !st.PausedAt.IsZero() {
		age = kit.Coarse(cm.Now - float64(st.PausedAt.UnixNano())/1e9)
	}
	b.WriteString(kit.Fit(age, c.age) + " ")
	if c.scope > 0 {
		b.WriteString(kit.Fit(kit.USD(st.Spent.USD), c.scope) + " ")
	}
	_, why, _ := strings.Cut(st.Paused, ": ")
	if why == "" {
		why = "spent " + st.Spent.String()
	}
	b.WriteString(kit.Fit(termtext.Line(why), c.problem))
	return b.String()
}

// pausedLines are what the preview shows of a paused run: who, why, what
// it has spent, and the keys that let it go on or end it.
func pausedLines(cm *uictx.Common, st *look.State) []string {
	line := termtext.Line
	out := []string{line(st.AgentID + "'s run of " + kit.PlanSlug(st.Plan) + " · " + pausedState(st))}
	out = append(out, line(st.Paused))
	out = append(out, cm.St.Bold.Render("Spent so far:")+" "+st.Spent.String())
	if !st.PausedAt.IsZero() {
		out = append(out, cm.St.Bold.Render("Paused:")+" "+kit.Coarse(cm.Now-float64(st.PausedAt.UnixNano())/1e9)+" ago")
	}
	out = append(out, "")
	if kit.BudgetPaused(st) {
		out = append(out, cm.St.Dim.Render("b raises the plan's budget: the run goes on at its driver's next heartbeat; x stops it and parks the plan in blocked/"))
	} else {
		out = append(out, cm.St.Dim.Render("p resumes the run where it is; x stops it"))
	}
	return out
}

// askExtend is b: a dialog asking how much to raise the paused run's plan
// budget by (tokens, dollars or both, as spend.ParseLimit reads them);
// ledger.Extend records it and the driver goes on at its next heartbeat.
func (l *Pane) askExtend(pc *uictx.Ctx) tea.Msg {
	st := l.pausedRow()
	if ok, _ := canExtend(st); !ok {
		return nil
	}
	in := pc.TextField()
	in.Placeholder = "1M, $5"
	in.CharLimit = 40
	in.Width = 30
	cmd := in.Focus()
	t, slug, by := pc.Opt.Tree, kit.PlanSlug(st.Plan), pc.Opt.Agent
	return uictx.BatchReq{uictx.QuestionReq{Q: uictx.Question{
		Title: "Extend " + slug + "'s budget",
		Body: []string{termtext.Line(st.Paused),
			"Raise the plan's budget, and its runs', by tokens, dollars or both (2M, $5, or 1M, $5): " +
				termtext.Line(st.AgentID) + "'s run goes on at its driver's next heartbeat."},
		Verb: "extend", Input: &in,
		Refuse: func(_ model.Lane, s string) string {
			if lim, err := spend.ParseLimit(s); err != nil {
				return err.Error()
			} else if lim.None() {
				return "say how much: tokens (2M), dollars ($5) or both"
			}
			return ""
		},
		Do: func(_ model.Lane, s string) tea.Cmd { return extendCmd(t, slug, by, s) },
	}}, cmd}
}

// extendCmd records the operator's extension of slug's budget by s.
func extendCmd(t *planfs.Tree, slug, by, s string) tea.Cmd {
	return uictx.Action("extend", func() (string, error) {
		lim, err := spend.ParseLimit(s)
		if err != nil {
			return "", err
		}
		if err := t.Writable(); err != nil {
			return "", err
		}
		err = ledger.Extend(t.Project, ledger.Extension{Plan: slug, Tokens: lim.Tokens, USD: lim.USD, By: by, At: time.Now()})
		return "raised " + slug + "'s budget by " + lim.String() + "; its run goes on at its driver's next heartbeat", err
	})
}

// askStopRun is x: a confirm, then the paused run stopped as the Workers
// pane stops a worker (its state file looked at again first).
func (l *Pane) askStopRun(pc *uictx.Ctx) tea.Msg {
	st := l.pausedRow()
	if ok, _ := canStopRun(st); !ok {
		return nil
	}
	run := *st
	who, slug := termtext.Line(st.AgentID), termtext.Line(kit.PlanSlug(st.Plan))
	then := "it ends the run and releases " + slug + "."
	if kit.BudgetPaused(st) {
		then = "it ends the run and parks " + slug + " in blocked/ with what it spent in the reason."
	}
	project, t := pc.Opt.Tree.Project, pc.Opt.Tree
	return uictx.QuestionReq{Q: uictx.Question{
		Title: "Stop " + who + "'s paused run",
		Body:  []string{"Send SIGTERM to " + who + " (pid " + kit.Itoa(st.PID) + "); " + then},
		Verb:  "stop",
		Do:    func(model.Lane, string) tea.Cmd { return verbs.StopCmd(project, t, run, false) },
	}}
}

// askApprove is A: a confirm dialog that shows the scope the build will
// be held to.
func (l *Pane) askApprove(pc *uictx.Ctx) tea.Msg {
	e := l.Row()
	if ok, _ := canDecide(e); !ok {
		return nil
	}
	t, slug, by := pc.Opt.Tree, e.Slug, coord.Approver{AgentID: pc.Opt.Agent, ReadOnly: pc.Opt.ReadOnly}
	body := []string{"Approve " + entryAgent(e) + "'s proposal " + kit.Itoa(e.N) + " for " + slug + " as " + by.AgentID +
		": its next run builds it, held to this scope."}
	if e.ScopeFound && len(e.Scope.Patterns) > 0 {
		body = append(body, "Files in scope: "+strings.Join(e.Scope.Patterns, ", "))
	} else if e.ScopeFound {
		body = append(body, "⚠ its Files in scope section lists nothing: the build may touch no file.")
	} else {
		body = append(body, "⚠ no Files in scope section: the build runs with no scope check.")
	}
	if e.Problem != "" {
		body = append(body, "⚠ "+e.Problem)
	}
	return uictx.QuestionReq{Q: uictx.Question{
		Title: "Approve " + slug + " · proposal " + kit.Itoa(e.N), Body: body, Verb: "approve",
		Do: func(model.Lane, string) tea.Cmd {
			return uictx.Action("approve", func() (string, error) {
				d, err := coord.Approve(t, slug, by, nil)
				return "approved " + slug + "'s proposal " + kit.Itoa(d.N) + "; its agent's next run builds it", err
			})
		},
	}}
}

// askReject is X: a dialog with a note, which the agent's next plan turn
// reads; the dialog refuses an empty one.
func (l *Pane) askReject(pc *uictx.Ctx) tea.Msg {
	e := l.Row()
	if ok, _ := canDecide(e); !ok {
		return nil
	}
	in := pc.TextField()
	in.Placeholder = "what the plan should do differently"
	in.CharLimit = 2000
	in.Width = 50
	cmd := in.Focus()
	t, slug, by := pc.Opt.Tree, e.Slug, coord.Approver{AgentID: pc.Opt.Agent, ReadOnly: pc.Opt.ReadOnly}
	return uictx.BatchReq{uictx.QuestionReq{Q: uictx.Question{
		Title: "Reject " + slug + " · proposal " + kit.Itoa(e.N),
		Body:  []string{"Send " + entryAgent(e) + "'s proposal back with your note: its next run plans again, with the note as FLEET_FEEDBACK."},
		Verb:  "reject", Input: &in,
		Refuse: func(_ model.Lane, note string) string {
			if note == "" {
				return "say what should change: a rejection needs a note"
			}
			return ""
		},
		Do: func(_ model.Lane, note string) tea.Cmd {
			if note == "" {
				return func() tea.Msg {
					return uictx.ActionMsg{Err: errors.New("reject: a rejection needs a note; nothing sent back")}
				}
			}
			return uictx.Action("reject", func() (string, error) {
				_, err := coord.Reject(t, slug, note, by)
				return "rejected " + slug + "'s proposal; its agent plans again with your note", err
			})
		},
	}}, cmd}
}

// open is enter: the proposal whole, full screen, rendered at the
// detail's width; or a paused run's worker, as the Workers pane opens it.
func (l *Pane) open(pc *uictx.Ctx) tea.Msg {
	e := l.Row()
	if st := l.pausedRow(); st != nil {
		return uictx.WorkerReq{AgentID: st.AgentID}
	}
	if c := l.commentRow(); c != nil {
		return openComment(*c)
	}
	if e == nil {
		return nil
	}
	ent, style, width := *e, pc.Opt.MarkdownStyle, max(20, pc.Cols-3)
	return uictx.Detail("inbox\x00"+ent.Slug, ent.Slug+" · proposal "+kit.Itoa(ent.N), func() func(*uictx.Ctx) []string {
		text := uictx.ReadProposal(ent).Render(style, width)
		return func(pc *uictx.Ctx) []string { return proposalLines(pc.Common, &ent, text) }
	})
}
