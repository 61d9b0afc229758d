// Package merge is the cockpit's Merge pane: every candidate and queue
// entry as the engine derives them (landing.List, read by the root:
// uictx.Ctx.Merge), the gate's notices and the next batch above them,
// and the keys that carry a change from review to the integration branch
// (the candidate keys are ui/mergekeys', which the Plans pane offers
// too); with a forge, each candidate's PR, which o opens (pr.go). The
// pane never decides a state: it shows the engine's words and asks the
// engine to act.
package merge

import (
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/mergekeys"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// Pane is the Merge pane: the listing as last read (uictx.Ctx.Merge),
// the rows the filter lets through, and their columns.
type Pane struct {
	kit.Table
	kit.Filter
	id      uictx.PaneID // its place in the tab order
	listing landing.Listing
	err     error
	loaded  bool
	shown   []int // the items the filter lets through, in listing order
	cols    mergeCols
	// forge: the project has a forge, or some candidate a PR; o and r
	// are offered then (and listed in the help).
	forge bool
	// readOnly: a viewer's session, whose `?` lists every act refused.
	readOnly bool
}

// New is the Merge pane at id in the tab order.
func New(id uictx.PaneID) uictx.Pane { return &Pane{id: id} }

// Row is the selected candidate, nil when there is none.
func (l *Pane) Row() *landing.Status { return l.row() }

// Shown are the items the filter lets through, by their place in the
// listing.
func (l *Pane) Shown() []int { return l.shown }

func (l *Pane) SetSize(w, h int) {
	// Less the integration line above the table and the legend below.
	l.Table.SetSize(w, h-2)
}

// checkLegend says what each check glyph means, below the table.
const checkLegend = "checks: ✓ pass  ✗ fail  ! error  ◷ timeout  · missing  … running"

func (l *Pane) Rebuild(pc *uictx.Ctx) {
	l.listing, l.err, l.loaded = pc.Merge.Listing, pc.Merge.Err, pc.Merge.Loaded
	l.forge = pc.Merge.Forge.On || anyPR(l.listing.Items)
	l.readOnly = pc.Opt.ReadOnly
	f := l.Needle()
	l.shown = l.shown[:0]
	items := l.listing.Items
	for i := range items {
		if f == "" || mergeMatches(&items[i], f) {
			l.shown = append(l.shown, i)
		}
	}
	keys := make([]string, len(l.shown))
	for i, j := range l.shown {
		keys[i] = items[j].Slug
	}
	l.cols = mergeColumns(l.Width, items, l.shown)
	c := l.cols
	cm := pc.Common
	l.Set(keys, func(i int, sel bool) string {
		return mergeLine(cm, &l.listing.Items[l.shown[i]], l.listing.Batch, c, sel)
	})
	if want := pc.Merge.Want; want != "" && l.loaded {
		l.GoTo(want)
	}
}

func mergeMatches(s *landing.Status, f string) bool {
	rev := ""
	if len(s.Reviews) > 0 {
		rev = s.Reviews[0].Reviewer + " " + s.Reviews[0].Verdict
	}
	return kit.AnyContains(f, s.Slug, string(s.State), s.Why, s.ApprovedBy, s.Commit, s.Branch, rev, strings.Join(s.ConflictPaths, " "), PRCell(s))
}

// row is the selected candidate, nil when there is none.
func (l *Pane) row() *landing.Status {
	if l.Cursor >= len(l.shown) {
		return nil
	}
	return &l.listing.Items[l.shown[l.Cursor]]
}

// Selected offers the key map nothing: the plan verbs stay off here, where
// A, X, + and - act through the landing engine.
func (l *Pane) Selected() uictx.Selection { return uictx.Selection{} }

func (l *Pane) SyncKeys(pc *uictx.Ctx, set uictx.SetKey) {
	k := &pc.Keys.Merge
	here := pc.Shown == l.id
	r := l.row()
	onRow := here && r != nil
	live := onRow && r.State != landing.Landed && r.Commit != ""
	where := mergekeys.Away
	if here {
		where = mergekeys.InMerge
	}
	// Away, the keys say where they act; the Plans pane, synced last
	// when shown, sets them for its plan.
	mergekeys.Keys(pc, set, where, r)
	switch {
	case pc.Opt.Self == "":
		set(&k.Peer, false, "peer review: this UI does not know its own binary, so it cannot start one")
	default:
		set(&k.Peer, live, "peer review: select a candidate with a branch")
	}
	set(&k.Remove, onRow && r.Position != nil, "remove: select a queued entry")
	set(&k.Accept, here && l.listing.MovedTo != "", "accept: no move outside the queue to accept")
	set(&k.Open, onRow, "open: select a candidate in the merge pane (6)")
	set(&k.Diff, onRow, "diff: select a candidate in the merge pane (6)")
	l.syncForgeKeys(pc, set, onRow)
}

func (l *Pane) Update(pc *uictx.Ctx, msg tea.KeyMsg) (tea.Msg, bool) {
	if req, ok := mergekeys.Key(pc, msg, mergekeys.InMerge, l.row()); ok {
		return req, true
	}
	k := &pc.Keys.Merge
	switch {
	case key.Matches(msg, k.Peer):
		return l.startPeer(pc), true
	case key.Matches(msg, k.Remove):
		return l.queueRemove(pc), true
	case key.Matches(msg, k.Accept):
		return l.askAccept(pc), true
	case key.Matches(msg, k.Open):
		return l.open(pc), true
	case key.Matches(msg, k.Diff):
		return l.diff(pc), true
	case key.Matches(msg, k.Browse):
		return uictx.BrowseReq{URL: l.prURL()}, true
	case key.Matches(msg, k.Sync):
		return uictx.ForgeSyncReq{}, true
	}
	return nil, false
}

func (l *Pane) View(pc *uictx.Ctx, h int) []string {
	empty := "no candidates: a plan in review-needed/ whose feature/<slug> branch is ahead of the integration branch shows here"
	switch {
	case !l.loaded:
		empty = "reading the merge queue…"
	case l.err != nil:
		empty = "no candidates to show (the line above says why)"
	}
	out := []string{" " + l.info(pc.Common)}
	// The gate's own notices (a move the queue did not make, checks that
	// differ from the committed ones), one line each, above the table.
	for i, n := range l.listing.Notices {
		if len(out) >= h/2 {
			break
		}
		line := "⚠ " + termtext.Line(n)
		if k := &pc.Keys.Merge.Accept; k.Enabled() && l.listing.MovedTo != "" && i == len(l.listing.Notices)-1 {
			// The move's notice, last: its key first, before the width
			// cuts the line.
			line = "⚠ " + k.Help().Key + " accepts it as yours · " + termtext.Line(n)
		}
		if !pc.Plain {
			line = pc.St.Bad.Render(line)
		}
		out = append(out, " "+line)
	}
	if f := forgeLine(pc.Common, pc.Merge.Forge); f != "" && len(out) < h/2 {
		out = append(out, " "+f)
	}
	if b := l.listing.Batch; b != nil && len(out) < h/2 {
		out = append(out, " "+termtext.Line(mergekeys.BatchLine(b)))
	}
	out = append(out, pc.TableBox(kit.FilterTitle("Merge", &l.Filter), l.cols.header(), &l.Table, h-1-len(out), kit.EmptyText(&l.Filter, empty))...)
	legend := checkLegend
	if l.listing.Batch != nil || anyFlaky(l.listing.Items) {
		legend += "  " + mergekeys.FlakyGlyph + " flaky"
	}
	return append(out, " "+pc.St.Dim.Render(legend))
}

func anyFlaky(items []landing.Status) bool {
	for _, s := range items {
		for _, c := range s.Checks {
			if c.Flaky {
				return true
			}
		}
	}
	return false
}

// info is the line above the table: the integration branch and its
// tip, how many are queued, and what gates a landing.
func (l *Pane) info(cm *uictx.Common) string {
	ls := &l.listing
	if err := l.err; err != nil {
		// The last good reading stays below, said to be old.
		warn := "⚠ merge queue: " + termtext.Line(err.Error())
		if ls.Integration != "" {
			warn += " (rows from the last reading)"
		}
		if !cm.Plain {
			warn = cm.St.Bad.Render(warn)
		}
		return warn
	}
	if !l.loaded {
		return cm.St.Dim.Render("integration branch: not read yet")
	}
	s := "integration " + termtext.Line(ls.Integration) + " @ " + kit.Short(ls.Tip)
	queued := 0
	for i := range ls.Items {
		if ls.Items[i].Position != nil {
			queued++
		}
	}
	s += " · " + kit.Itoa(queued) + " queued"
	gate := " · checks: " + termtext.Line(strings.Join(ls.CheckNames, ", "))
	if len(ls.CheckNames) == 0 {
		gate = " · ungated (no checks in fleetwatch.yaml)"
		if !cm.Plain {
			gate = cm.St.Warn.Render(gate)
		}
	}
	return s + gate
}

type mergeCols struct{ slug, state, tip, ab, reviewed, approved, checks, pr, why int }

// mergeWhyFloor is the room the reason keeps before the review and
// approval columns take theirs: a conflict's paths or "ungated" matter
// more than who reviewed.
const mergeWhyFloor = 20

// mergeColumns sizes the table for width w and the items shown.
func mergeColumns(w int, items []landing.Status, shown []int) mergeCols {
	slug, ab, rev, appr, checks := len("slug"), kit.CellWidth(abHeader), len("reviewed"), len("approved"), len("checks")
	pr := 0 // no column unless some candidate has a PR
	if anyPR(items) {
		pr = len(prHeader)
	}
	for _, j := range shown {
		s := &items[j]
		if pr > 0 {
			pr = max(pr, kit.CellWidth(PRCell(s)))
		}
		slug, ab = max(slug, kit.CellWidth(s.Slug)), max(ab, kit.CellWidth(aheadBehind(s)))
		rev, appr = max(rev, kit.CellWidth(ReviewedCell(s))), max(appr, kit.CellWidth(approvedCell(s)))
		checks = max(checks, len(s.Checks))
	}
	c := mergeCols{state: len("needs review"), tip: 7}
	room := w - mergeLead + 1 - (c.state + 1) - (c.tip + 1) - mergeWhyFloor
	room = kit.Allot(room, kit.Col(&c.slug, slug, 8, 32), kit.Col(&c.ab, ab, 5, 11), kit.Col(&c.checks, checks, 6, 24),
		kit.Col(&c.pr, pr, 6, 20), kit.Col(&c.approved, appr, 8, 16), kit.Col(&c.reviewed, rev, 8, 28))
	c.why = max(0, room-1+mergeWhyFloor)
	return c
}

// mergeLead is the gutter and the queue position before the slug.
const mergeLead = 5

func (c mergeCols) header() string {
	h := "   # " + kit.Fit("slug", c.slug) + " " + kit.Fit("state", c.state) + " " + kit.Fit("tip", c.tip) + " " + kit.Fit(abHeader, c.ab) + " "
	if c.reviewed > 0 {
		h += kit.Fit("reviewed", c.reviewed) + " "
	}
	if c.approved > 0 {
		h += kit.Fit("approved", c.approved) + " "
	}
	return h + kit.Fit("checks", c.checks) + " " + kit.Cell(prHeader, c.pr) + kit.Fit("why", c.why)
}

// mergeLine is a candidate's row, not yet highlighted (kit.Table highlights the selected one).
func mergeLine(cm *uictx.Common, s *landing.Status, batch *landing.BatchView, c mergeCols, selected bool) string {
	var b strings.Builder
	b.WriteString(kit.Gutter(selected))
	pos := ""
	if s.Position != nil {
		pos = kit.Itoa(*s.Position)
	}
	b.WriteString(kit.FitRight(pos, 2) + " ")
	b.WriteString(kit.Fit(termtext.Line(s.Slug), c.slug) + " ")
	b.WriteString(stateCell(cm, s.State, c.state) + " ")
	b.WriteString(kit.Fit(kit.Short(s.Commit), c.tip) + " ")
	b.WriteString(kit.Fit(aheadBehind(s), c.ab) + " ")
	if c.reviewed > 0 {
		b.WriteString(kit.Fit(termtext.Line(ReviewedCell(s)), c.reviewed) + " ")
	}
	if c.approved > 0 {
		b.WriteString(kit.Fit(termtext.Line(approvedCell(s)), c.approved) + " ")
	}
	b.WriteString(checksCell(cm, s, c.checks) + " ")
	b.WriteString(kit.Cell(PRCell(s), c.pr))
	why := termtext.Line(mergekeys.OrWords(batchWhy(s, batch), mergekeys.WhyOf(cm, s)))
	if len(s.ScopeViolations) > 0 {
		mark := "⚠ " + mergekeys.CountPaths(len(s.ScopeViolations)) + " out of scope"
		why = mark + kit.OrEmpty(" · ", why)
	}
	b.WriteString(kit.Fit(why, c.why))
	return b.String()
}

// stateCell is a state in the engine's words, coloured by what it asks of
// a person; the word alone says it under NO_COLOR.
func stateCell(cm *uictx.Common, st landing.State, w int) string {
	cell := kit.Fit(string(st), w)
	if cm.Plain {
		return cell
	}
	switch st {
	case landing.Ready, landing.Landed:
		return cm.St.Good.Render(cell)
	case landing.Failed, landing.Conflict:
		return cm.St.Bad.Render(cell)
	case landing.Stale:
		return cm.St.Warn.Render(cell)
	case landing.Checking, landing.Queued:
		return busy(cm).Render(cell)
	}
	return cell
}

// busy is the colour of work under way (checking, queued, a running
// check): the diff's hunk cyan.
func busy(cm *uictx.Common) lipgloss.Style {
	return cm.R.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "#0E7490", Dark: "#56B6C2"})
}

func checksCell(cm *uictx.Common, s *landing.Status, w int) string {
	if s.State == landing.NoChange {
		return kit.Fit("", w) // no commit of its own: no check of it
	}
	if len(s.Checks) == 0 {
		word := "—"
		if s.Ungated {
			word = "ungated"
		}
		return kit.Fit(word, w)
	}
	var b strings.Builder
	for _, c := range s.Checks {
		g := mergekeys.ResultGlyph(c)
		if !cm.Plain {
			switch c.Result {
			case landing.Pass:
				g = cm.St.Good.Render(g)
			case landing.Fail, landing.Error, landing.Timeout:
				g = cm.St.Bad.Render(g)
			case landing.Running:
				g = busy(cm).Render(g)
			}
		}
		b.WriteString(g)
	}
	return kit.Fit(b.String(), w)
}

// aheadBehind is "↑3 ↓1": commits on the branch and not on the
// integration branch, and the other way round; arrows, as the Worktrees
// pane's, since the diff's +/− count lines.
func aheadBehind(s *landing.Status) string {
	return "↑" + kit.Itoa(s.Ahead) + " ↓" + kit.Itoa(s.Behind)
}

// abHeader is the ahead/behind column's title.
const abHeader = "commits"

// ReviewedCell is the newest peer review: its verdict and reviewer, and
// "stale" when the branch moved since.
func ReviewedCell(s *landing.Status) string {
	if len(s.Reviews) == 0 {
		return "—"
	}
	r := s.Reviews[0]
	cell := r.Verdict + " " + r.Reviewer
	if r.Stale {
		cell += " stale"
	}
	return cell
}

func approvedCell(s *landing.Status) string {
	switch {
	case s.ApprovedBy != "":
		return s.ApprovedBy
	case s.Approval != nil && s.Approval.Stale:
		return s.Approval.By + " stale"
	}
	return "—"
}

// batchWhy is what a queued row of the batch being checked is waiting
// for: its own tree is never checked, the batch's is, so "not checked on
// this tree yet" would read as if nothing were under way. "" when the
// row is not in a batch whose checks run.
func batchWhy(s *landing.Status, b *landing.BatchView) string {
	if b == nil || s.State != landing.Queued || !slices.Contains(b.Slugs, s.Slug) {
		return ""
	}
	var running []string
	var since time.Time
	for _, c := range b.Checks {
		if c.Result == landing.Running {
			running = append(running, c.Name)
			if since.IsZero() || (!c.Since.IsZero() && c.Since.Before(since)) {
				since = c.Since
			}
		}
	}
	if len(running) == 0 {
		return ""
	}
	var with []string
	for _, o := range b.Slugs {
		if o != s.Slug {
			with = append(with, o)
		}
	}
	if len(with) > 2 {
		with = append(with[:2], "+"+kit.Itoa(len(with)-2))
	}
	why := "checking in a batch"
	if len(with) > 0 {
		why += " with " + strings.Join(with, ", ")
	}
	if !since.IsZero() {
		why += " since " + since.Local().Format("15:04:05")
	}
	return why + ": " + strings.Join(running, ", ") + " running"
}

// startPeer starts `fleetwatch review SLUG --peer` detached; its verdict
// shows in the pane when it is stored.
func (l *Pane) startPeer(pc *uictx.Ctx) tea.Cmd {
	r := l.row()
	if r == nil || pc.Opt.Self == "" {
		return nil
	}
	self, t, project, slug := pc.Opt.Self, pc.Opt.Tree, pc.Opt.Tree.Project, r.Slug
	return uictx.Action("peer review", func() (string, error) {
		log, err := proc.StartDetachedAs(t, self, "review-"+slug+".log", "review", slug, "--peer", "--root", project)
		return "peer review of " + slug + " started (log: " + mergekeys.RelTo(project, log) + ")", err
	})
}

func (l *Pane) queueRemove(pc *uictx.Ctx) tea.Cmd {
	r := l.row()
	if r == nil {
		return nil
	}
	t, slug := pc.Opt.Tree, r.Slug
	return uictx.Action("queue remove", func() (string, error) {
		return "took " + slug + " out of the queue", landing.Remove(t, slug)
	})
}

// askAccept names the integration branch's tip a move outside the queue
// left and asks before taking it as the operator's own; a branch that
// moved again meanwhile is refused by the engine.
func (l *Pane) askAccept(pc *uictx.Ctx) tea.Msg {
	ls := &l.listing
	if ls.MovedTo == "" {
		return nil
	}
	t, agent, tip, branch := pc.Opt.Tree, pc.Opt.Agent, ls.MovedTo, ls.Integration
	body := []string{"Take " + branch + " @ " + kit.Short(tip) + " as your own move (a commit of settings or plan moves, a push you know of): " +
		"the warning stops until the next move nobody explained, and the next landing builds on it.",
		"If it was not you, leave it and find out who moved " + branch + " (git log names the commits)."}
	return uictx.QuestionReq{Q: uictx.Question{
		Title: "Accept " + branch + " @ " + kit.Short(tip), Body: body, Verb: "accept",
		Do: func(model.Lane, string) tea.Cmd {
			return uictx.Action("accept", func() (string, error) {
				a, err := landing.Accept(t, tip, agent)
				return "accepted " + a.Branch + " @ " + kit.Short(a.To) + " as your own move", err
			})
		},
	}}
}

// diff is `d`: the candidate's feature branch.
func (l *Pane) diff(pc *uictx.Ctx) tea.Msg {
	r := l.row()
	if r == nil {
		return nil
	}
	project, slug := pc.Opt.Tree.Project, r.Slug
	return uictx.Diff("plan "+termtext.Line(slug), "plan\x00"+slug, func() (look.Diff, error) {
		return look.DiffOfPlan(project, slug)
	})
}
