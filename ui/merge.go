package ui

// The Merge pane: every candidate and queue entry as the engine derives
// them (landing.List), and the keys that carry a change from review to the
// integration branch. The pane never decides a state: it shows the
// engine's words and asks the engine to act.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// mergeList is the Merge pane and all its state: the last listing and
// its slow tick (the feed asks for each reading, one at a time).
type mergeList struct {
	kit.Table
	kit.Filter
	listing landing.Listing
	err     error
	loaded  bool
	ticking bool  // a mergeTickMsg is pending
	shown   []int // the items the filter lets through, in listing order
	cols    mergeCols
	want    string // a slug to select once the listing shows it (a notice's)
}

// mergeTickMsg reads the queue again while it is looked at or checking:
// checks finish without any file the watcher sees changing in .plans/.
type mergeTickMsg time.Time

// mergeEvery is how often the shown or checking queue is read again.
const mergeEvery = 3 * time.Second

// mergeCmd lists every candidate and queue entry of project.
func mergeCmd(project string) tea.Cmd {
	return func() tea.Msg { return readMerge(project) }
}

func mergeTickCmd() tea.Cmd {
	return tea.Tick(mergeEvery, func(t time.Time) tea.Msg { return mergeTickMsg(t) })
}

func byPosition(a, b landing.Status) int { return position(a) - position(b) }

// position orders queue entries by place, the others after them.
func position(s landing.Status) int {
	if s.Position == nil {
		return 1 << 30
	}
	return *s.Position
}

// mergeTick starts the slow tick when the queue needs watching and none is
// pending.
func (m *Model) mergeTick() tea.Cmd {
	// With a hub, the hub ticks, once for every session.
	if m.feed.served() || m.merge.ticking || !m.mergeWatched() {
		return nil
	}
	m.merge.ticking = true
	return mergeTickCmd()
}

// mergeShown reports whether candidates are on screen: the Merge pane,
// or review-needed/ in the Plans pane, where the merge keys act on the
// selected plan's candidate.
func (m *Model) mergeShown() bool {
	return m.pane == mergePane || m.pane == plansPane && m.plans.lane == model.ReviewNeeded
}

// mergeWatched reports whether the queue may change with nothing on disk
// saying so to the watcher: it is shown, or a check is running.
func (m *Model) mergeWatched() bool {
	if m.mergeShown() {
		return true
	}
	for i := range m.merge.listing.Items {
		if m.merge.listing.Items[i].State == landing.Checking {
			return true
		}
	}
	return false
}

func (m *Model) mergeTicked() tea.Cmd {
	m.merge.ticking = false
	if !m.mergeWatched() {
		return nil
	}
	return tea.Batch(m.requestMerge(), m.mergeTick())
}

func (l *mergeList) SetSize(w, h int) {
	// Less the integration line above the table and the legend below.
	l.Table.SetSize(w, h-2)
}

// checkLegend says what each check glyph means, below the table.
const checkLegend = "checks: ✓ pass  ✗ fail  ! error  ◷ timeout  · missing  … running"

func (l *mergeList) Rebuild(pc *uictx.Ctx) {
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
	if l.want != "" && l.loaded && l.GoTo(l.want) {
		l.want = ""
	}
}

func mergeMatches(s *landing.Status, f string) bool {
	rev := ""
	if len(s.Reviews) > 0 {
		rev = s.Reviews[0].Reviewer + " " + s.Reviews[0].Verdict
	}
	return kit.AnyContains(f, s.Slug, string(s.State), s.Why, s.ApprovedBy, s.Commit, s.Branch, rev, strings.Join(s.ConflictPaths, " "))
}

// row is the selected candidate, nil when there is none.
func (l *mergeList) row() *landing.Status {
	if l.Cursor >= len(l.shown) {
		return nil
	}
	return &l.listing.Items[l.shown[l.Cursor]]
}

// head is the queue's first entry, nil when the queue is empty.
func (l *mergeList) head() *landing.Status {
	for i := range l.listing.Items {
		if p := l.listing.Items[i].Position; p != nil && *p == 1 {
			return &l.listing.Items[i]
		}
	}
	return nil
}

// Selected offers the key map nothing: the plan verbs stay off here, where
// A, X, + and - act through the landing engine.
func (l *mergeList) Selected() uictx.Selection { return uictx.Selection{} }

func (l *mergeList) SyncKeys(pc *uictx.Ctx, set uictx.SetKey) {
	k := &pc.Keys.Merge
	here := pc.Shown == mergePane
	r := l.row()
	onRow := here && r != nil
	live := onRow && r.State != landing.Landed && r.Commit != ""
	l.candidateKeys(pc, set)
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
}

// approvedTip reports whether a person's approve stands for r's tip.
func approvedTip(r *landing.Status) bool {
	return r != nil && r.ApprovedBy != "" && (r.Approval == nil || !r.Approval.Stale)
}

func approveWhy(r *landing.Status) string {
	switch {
	case approvedTip(r):
		return "approve: " + termtext.Line(r.Slug) + " is approved at its tip already (by " + termtext.Line(r.ApprovedBy) + ")"
	case r.State == landing.NoChange:
		return "approve: " + termtext.Line(r.Slug) + " has no commit the integration branch lacks: nothing to approve (X sends it back)"
	case r.State == landing.Landed:
		return "approve: " + termtext.Line(r.Slug) + " has landed"
	}
	return "approve: " + termtext.Line(r.Slug) + " has no branch to approve"
}

func addWhy(r *landing.Status) string {
	switch {
	case r.State == landing.NoChange:
		return "add: " + termtext.Line(r.Slug) + " has no commit the integration branch lacks: nothing to queue"
	case r.Position != nil:
		return "add: " + termtext.Line(r.Slug) + " is in the queue already, at " + kit.Itoa(*r.Position)
	case r.Approval != nil && r.Approval.Stale:
		return "add: " + termtext.Line(r.Slug) + "'s approval is stale (the branch moved); approve it again (A)"
	}
	return "add: only approved candidates join the queue; approve " + termtext.Line(r.Slug) + " first (A)"
}

func (l *mergeList) Update(pc *uictx.Ctx, msg tea.KeyMsg) (tea.Msg, bool) {
	if req, ok := l.candidateKey(pc, msg); ok {
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
	}
	return nil, false
}

func (l *mergeList) View(pc *uictx.Ctx, h int) []string {
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
	if b := l.listing.Batch; b != nil && len(out) < h/2 {
		out = append(out, " "+termtext.Line(batchLine(b)))
	}
	out = append(out, pc.TableBox(kit.FilterTitle("Merge", &l.Filter), l.cols.header(), &l.Table, h-1-len(out), kit.EmptyText(&l.Filter, empty))...)
	legend := checkLegend
	if l.listing.Batch != nil || anyFlaky(l.listing.Items) {
		legend += "  " + flakyGlyph + " flaky"
	}
	return append(out, " "+pc.St.Dim.Render(legend))
}

// batchLine is the next batch in one line: who rides together, its
// checks, and the bisection of a failed one.
func batchLine(b *landing.BatchView) string {
	var g strings.Builder
	for _, c := range b.Checks {
		g.WriteString(resultGlyph(c))
	}
	line := "batch of " + kit.Itoa(len(b.Slugs)) + ": " + strings.Join(b.Slugs, ", ") + " · " + g.String()
	if b.Retried {
		line += " · retried"
	}
	if bi := b.Bisection; bi != nil {
		line += " · bisecting: " + kit.Itoa(bi.Passing) + " pass, " + kit.Itoa(bi.Failing) + " fail"
		if bi.Culprit != "" {
			line += ", culprit " + bi.Culprit
		}
	}
	return line
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
func (l *mergeList) info(cm *uictx.Common) string {
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

type mergeCols struct{ slug, state, tip, ab, reviewed, approved, checks, why int }

// mergeWhyFloor is the room the reason keeps before the review and
// approval columns take theirs: a conflict's paths or "ungated" matter
// more than who reviewed.
const mergeWhyFloor = 20

// mergeColumns sizes the table for width w and the items shown.
func mergeColumns(w int, items []landing.Status, shown []int) mergeCols {
	slug, ab, rev, appr, checks := len("slug"), kit.CellWidth(abHeader), len("reviewed"), len("approved"), len("checks")
	for _, j := range shown {
		s := &items[j]
		slug, ab = max(slug, kit.CellWidth(s.Slug)), max(ab, kit.CellWidth(aheadBehind(s)))
		rev, appr = max(rev, kit.CellWidth(reviewedCell(s))), max(appr, kit.CellWidth(approvedCell(s)))
		checks = max(checks, len(s.Checks))
	}
	c := mergeCols{state: len("needs review"), tip: 7}
	room := w - mergeLead + 1 - (c.state + 1) - (c.tip + 1) - mergeWhyFloor
	room = kit.Allot(room, kit.Col(&c.slug, slug, 8, 32), kit.Col(&c.ab, ab, 5, 11), kit.Col(&c.checks, checks, 6, 24),
		kit.Col(&c.approved, appr, 8, 16), kit.Col(&c.reviewed, rev, 8, 28))
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
	return h + kit.Fit("checks", c.checks) + " " + kit.Fit("why", c.why)
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
		b.WriteString(kit.Fit(termtext.Line(reviewedCell(s)), c.reviewed) + " ")
	}
	if c.approved > 0 {
		b.WriteString(kit.Fit(termtext.Line(approvedCell(s)), c.approved) + " ")
	}
	b.WriteString(checksCell(cm, s, c.checks) + " ")
	why := termtext.Line(orWords(batchWhy(s, batch), whyOf(cm, s)))
	if len(s.ScopeViolations) > 0 {
		mark := "⚠ " + countPaths(len(s.ScopeViolations)) + " out of scope"
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

// checkGlyph is one check's result as one cell; each result has its own
// shape, so no colour is needed.
func checkGlyph(r landing.Result) string {
	switch r {
	case landing.Pass:
		return "✓"
	case landing.Fail:
		return "✗"
	case landing.Error:
		return "!"
	case landing.Timeout:
		return "◷"
	case landing.Running:
		return "…"
	}
	return "·"
}

// flakyGlyph marks a pass that came on a retry after a failure.
const flakyGlyph = "≈"

// resultGlyph is c's glyph, a flaky pass apart from a pass.
func resultGlyph(c landing.CheckResult) string {
	if c.Result == landing.Pass && c.Flaky {
		return flakyGlyph
	}
	return checkGlyph(c.Result)
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
		g := resultGlyph(c)
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

// countPaths is "1 path", "3 paths".
func countPaths(n int) string {
	if n == 1 {
		return "1 path"
	}
	return kit.Itoa(n) + " paths"
}

// aheadBehind is "↑3 ↓1": commits on the branch and not on the
// integration branch, and the other way round; arrows, as the Worktrees
// pane's, since the diff's +/− count lines.
func aheadBehind(s *landing.Status) string {
	return "↑" + kit.Itoa(s.Ahead) + " ↓" + kit.Itoa(s.Behind)
}

// abHeader is the ahead/behind column's title.
const abHeader = "commits"

// reviewedCell is the newest peer review: its verdict and reviewer, and
// "stale" when the branch moved since.
func reviewedCell(s *landing.Status) string {
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

// whyOf is the state's reason in the engine's words, with the
// conflicting paths when the reason does not name them.
func whyOf(cm *uictx.Common, s *landing.Status) string {
	why := s.Why
	if s.State == landing.Approved && s.ApprovedBy != "" {
		// The engine names the CLI's verb; here the key does it, and a
		// viewer's screen names no action.
		why = "approved by " + s.ApprovedBy + "; + queues it"
		if cm.Opt.ReadOnly {
			why = "approved by " + s.ApprovedBy + "; not queued yet"
		}
	}
	if len(s.ConflictPaths) > 0 && !strings.Contains(why, s.ConflictPaths[0]) {
		paths := "conflict in " + strings.Join(s.ConflictPaths, ", ")
		if why == "" {
			why = paths
		} else {
			why += ": " + paths
		}
	}
	if why == "" && s.Ungated {
		why = "ungated: no checks configured — land with --ungated"
	}
	return why
}

// The merge keys A, X, + and m act on what is selected where they are
// pressed: the Merge pane's row, or in the Plans pane the selected plan's
// own candidate. Anywhere else, or without a candidate, they are off and
// say why; never do they act on a row the operator cannot see.

// candidate is the candidate the merge keys act on here, nil when none.
func (l *mergeList) candidate(pc *uictx.Ctx) *landing.Status {
	switch pc.Shown {
	case mergePane:
		return l.row()
	case plansPane:
		// Its own: the candidate of the plan where it is, in review-needed/.
		if sel := pc.Target; sel.Row != nil {
			if r := l.bySlug(sel.Row.Plan.Slug); r != nil && r.Rel == sel.Row.Plan.Rel {
				return r
			}
		}
	}
	return nil
}

// bySlug is slug's candidate in the last listing, nil when it has none.
func (l *mergeList) bySlug(slug string) *landing.Status {
	for i := range l.listing.Items {
		if l.listing.Items[i].Slug == slug {
			return &l.listing.Items[i]
		}
	}
	return nil
}

// noCandidate is why verb has nothing to act on here.
func (l *mergeList) noCandidate(pc *uictx.Ctx, verb string) string {
	if pc.Shown != plansPane {
		return verb + ": select a candidate in the merge pane (6)"
	}
	sel := pc.Target
	switch {
	case sel.Row == nil:
		return verb + ": select a plan in review-needed/ (or a candidate in the merge pane, 6)"
	case !l.loaded:
		return verb + ": the merge queue is not read yet; 6 shows it"
	}
	return verb + ": " + termtext.Line(sel.Row.Plan.Slug) + " is not a merge candidate: only plans in review-needed/ are"
}

// candidateKeys sets A, X, + and m for the candidate here; the Plans
// pane sets them too, for the selected plan's candidate.
func (l *mergeList) candidateKeys(pc *uictx.Ctx, set uictx.SetKey) {
	k := &pc.Keys.Merge
	r := l.candidate(pc)
	if r == nil {
		for _, b := range []struct {
			b    *key.Binding
			verb string
		}{{&k.Approve, "approve"}, {&k.NeedsWork, "needs work"}, {&k.Add, "add"}} {
			set(b.b, false, l.noCandidate(pc, b.verb))
		}
		l.landKey(pc, set, nil)
		return
	}
	open := r.State != landing.Landed && r.Commit != ""
	live := open && r.State != landing.NoChange
	set(&k.Approve, live && !approvedTip(r), approveWhy(r))
	set(&k.NeedsWork, open && r.Rel != "", needsWorkWhy(r))
	set(&k.Add, live && r.Position == nil && approvedTip(r), addWhy(r))
	l.landKey(pc, set, r)
}

func needsWorkWhy(r *landing.Status) string {
	switch {
	case r.State == landing.Landed:
		return "needs work: " + termtext.Line(r.Slug) + " has landed"
	case r.Commit == "":
		return "needs work: " + termtext.Line(r.Slug) + " has no branch to send back"
	}
	return "needs work: " + termtext.Line(r.Slug) + "'s plan is not in review-needed/"
}

// landKey sets m: in the Merge pane it lands the queue's head; in the
// Plans pane only when the selected plan's candidate is that head.
func (l *mergeList) landKey(pc *uictx.Ctx, set uictx.SetKey, r *landing.Status) {
	k := &pc.Keys.Merge
	h := l.head()
	switch {
	case pc.Opt.Self == "":
		set(&k.Land, false, "land: this UI does not know its own binary, so it cannot start the lander")
	case pc.Shown == mergePane:
		set(&k.Land, h != nil, "land: the queue is empty (+ adds an approved candidate)")
	case pc.Shown != plansPane:
		set(&k.Land, false, "land: switch to the merge pane (6)")
	case r == nil:
		set(&k.Land, false, l.noCandidate(pc, "land"))
	case r.Position == nil:
		set(&k.Land, false, "land: "+termtext.Line(r.Slug)+" is not queued; only the queue's head lands")
	default:
		set(&k.Land, h == r, "land: "+termtext.Line(r.Slug)+" is at place "+kit.Itoa(*r.Position)+"; only the queue's head lands")
	}
}

// candidateKey answers A, X, + and m on the candidate here: the Merge
// pane's row, or in the Plans pane the selected plan's.
func (l *mergeList) candidateKey(pc *uictx.Ctx, msg tea.KeyMsg) (tea.Msg, bool) {
	k := &pc.Keys.Merge
	switch {
	case key.Matches(msg, k.Approve):
		return l.askApprove(pc), true
	case key.Matches(msg, k.NeedsWork):
		return l.askNeedsWork(pc), true
	case key.Matches(msg, k.Add):
		return l.queueAdd(pc), true
	case key.Matches(msg, k.Land):
		return l.askLand(pc), true
	}
	return nil, false
}

// leadToCandidate is enter on a "waits for review" notice: the Merge pane
// on that plan's candidate, once the queue is read.
func (m *Model) leadToCandidate(rel string) tea.Cmd {
	cmd := m.setPane(mergePane)
	slug := model.Rel(rel).Slug()
	m.merge.want = slug
	if m.merge.loaded && m.merge.GoTo(slug) {
		m.merge.want = ""
	}
	m.syncKeys()
	return cmd
}

// updateAsked takes what answers bring besides an action's result: a
// question asked after another, a landing's end, an edit's steps.
func (m *Model) updateAsked(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case askMsg:
		m.stack.push(msg.d)
		return nil, true
	case landDoneMsg:
		return m.landDone(msg), true
	}
	return m.updateEdit(msg)
}

// The Merge pane's verbs. Each runs off the UI goroutine on copies; the
// ones a person confirms first read the queue again and refuse when the
// commit they were shown is no longer the one they would act on.

// stillAt refuses when slug's branch tip is no longer commit (or slug is
// no longer a candidate), and when head, the queue's first entry is not.
func stillAt(project, slug, commit string, head bool) error {
	l, err := landing.List(project)
	if err != nil {
		return err
	}
	for _, s := range l.Items {
		if s.Slug != slug {
			continue
		}
		switch {
		case s.Commit != commit:
			return fmt.Errorf("%s moved to %s while you decided (you saw %s); nothing done, look again", slug, kit.Short(s.Commit), kit.Short(commit))
		case head && (s.Position == nil || *s.Position != 1):
			return fmt.Errorf("%s is no longer the queue's head; nothing done, look again", slug)
		}
		return nil
	}
	return fmt.Errorf("%s is no longer a candidate; nothing done", slug)
}

func (l *mergeList) askApprove(pc *uictx.Ctx) tea.Msg {
	r := l.candidate(pc)
	if r == nil {
		return nil
	}
	t, project, agent, slug, commit := pc.Opt.Tree, pc.Opt.Tree.Project, pc.Opt.Agent, r.Slug, r.Commit
	body := []string{"Approve " + slug + " at " + kit.Short(commit) + " (" + r.Branch + ") as " + agent +
		": only a person's approve lets a change join the queue and land."}
	if r.State == landing.Stale {
		body = append(body, "⚠ stale: "+orWords(r.Why, "the branch moved after its review or checks")+"; you approve the tip "+kit.Short(commit)+".")
	}
	if r.Approval != nil && r.Approval.Stale {
		body = append(body, "⚠ the approve by "+r.Approval.By+" of "+kit.Short(r.Approval.Commit)+" is stale: the branch moved since.")
	}
	switch {
	case len(r.Reviews) == 0:
		body = append(body, "No peer review yet (v asks another worker for one).")
	case r.Reviews[0].Stale:
		rv := r.Reviews[0]
		body = append(body, "⚠ the newest peer review ("+rv.Verdict+" by "+rv.Reviewer+") is of "+kit.Short(rv.Commit)+", not the tip: stale.")
	default:
		rv := r.Reviews[0]
		body = append(body, "Peer review: "+rv.Verdict+" by "+rv.Reviewer+" at "+kit.Short(rv.Commit)+".")
	}
	approve := func(model.Lane, string) tea.Cmd {
		return uictx.Action("approve", func() (string, error) {
			if err := stillAt(project, slug, commit, false); err != nil {
				return "", err
			}
			a, err := landing.Approve(t, slug, agent)
			return "approved " + slug + " at " + kit.Short(a.Commit) + "; + queues it", err
		})
	}
	do := approve
	if v := r.ScopeViolations; len(v) > 0 {
		body = append(body, "⚠ it touches "+countPaths(len(v))+" outside its plan's scope: "+listPaths(v)+".")
		do = func(model.Lane, string) tea.Cmd {
			return func() tea.Msg { return askMsg{againApprove(slug, commit, v, approve)} }
		}
	}
	return uictx.QuestionReq{Q: uictx.Question{Title: "Approve " + slug + " @ " + kit.Short(commit), Body: body, Verb: "approve", Do: do}}
}

// askMsg puts a question on screen once the one before it is answered.
type askMsg struct{ d *dialog }

// againApprove asks once more before approving a change that touches
// paths outside its scope, naming them.
func againApprove(slug, commit string, paths []string, approve func(model.Lane, string) tea.Cmd) *dialog {
	body := []string{slug + " @ " + kit.Short(commit) + " touches " + countPaths(len(paths)) + " its plan's scope does not allow:"}
	for _, p := range paths[:min(len(paths), 8)] {
		body = append(body, "  "+p)
	}
	if len(paths) > 8 {
		body = append(body, "  and "+kit.Itoa(len(paths)-8)+" more")
	}
	body = append(body, "Approve it anyway? (esc leaves it unapproved; X sends it back with a note.)")
	return &dialog{Question: uictx.Question{Title: "Out of scope: " + slug, Body: body, Verb: "approve anyway", Do: approve}}
}

// listPaths names the first few paths, and how many more there are.
func listPaths(paths []string) string {
	const shown = 3
	s := strings.Join(paths[:min(shown, len(paths))], ", ")
	if len(paths) > shown {
		s += " and " + kit.Itoa(len(paths)-shown) + " more"
	}
	return s
}

func orWords(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (l *mergeList) askNeedsWork(pc *uictx.Ctx) tea.Msg {
	r := l.candidate(pc)
	if r == nil {
		return nil
	}
	in := pc.TextField()
	in.Placeholder = "what needs doing (goes under ## Review notes)"
	in.CharLimit = 2000
	in.Width = 50
	cmd := in.Focus()
	t, project, agent := pc.Opt.Tree, pc.Opt.Tree.Project, pc.Opt.Agent
	slug, commit, rel, queued := r.Slug, r.Commit, r.Rel, r.Position != nil
	body := []string{"Send " + slug + " back to its worker's lane with your note under ## Review notes; its branch " + r.Branch + " stays, and the next owner gets it."}
	if queued {
		body = append(body, "It leaves the queue (place "+kit.Itoa(*r.Position)+") and any approve is void.")
	}
	return uictx.BatchReq{uictx.QuestionReq{Q: uictx.Question{
		Title: "Needs work: " + slug, Body: body, Verb: "send back", Input: &in,
		Do: func(_ model.Lane, note string) tea.Cmd {
			if note == "" {
				return func() tea.Msg {
					return uictx.ActionMsg{Err: errors.New("needs work: say what needs doing; nothing sent back")}
				}
			}
			return uictx.Action("needs work", func() (string, error) {
				if err := stillAt(project, slug, commit, false); err != nil {
					return "", err
				}
				dst, err := t.SendBack(rel, note, planfs.Actor{AgentID: agent})
				if err != nil {
					return "", err
				}
				done := "sent " + slug + " back → " + kit.LaneOf(dst)
				if queued {
					if err := landing.Remove(t, slug); err != nil {
						return "", fmt.Errorf("%s, but it is still queued: %w", done, err)
					}
				}
				return done, nil
			})
		},
	}}, cmd}
}

// startPeer starts `fleetwatch review SLUG --peer` detached; its verdict
// shows in the pane when it is stored.
func (l *mergeList) startPeer(pc *uictx.Ctx) tea.Cmd {
	r := l.row()
	if r == nil || pc.Opt.Self == "" {
		return nil
	}
	self, t, project, slug := pc.Opt.Self, pc.Opt.Tree, pc.Opt.Tree.Project, r.Slug
	return uictx.Action("peer review", func() (string, error) {
		log, err := proc.StartDetachedAs(t, self, "review-"+slug+".log", "review", slug, "--peer", "--root", project)
		return "peer review of " + slug + " started (log: " + relTo(project, log) + ")", err
	})
}

func (l *mergeList) queueAdd(pc *uictx.Ctx) tea.Cmd {
	r := l.candidate(pc)
	if r == nil {
		return nil
	}
	t, slug := pc.Opt.Tree, r.Slug
	return uictx.Action("queue add", func() (string, error) {
		return "queued " + slug, landing.Add(t, slug)
	})
}

func (l *mergeList) queueRemove(pc *uictx.Ctx) tea.Cmd {
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
func (l *mergeList) askAccept(pc *uictx.Ctx) tea.Msg {
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

// The land dialog's choices when nothing gates a landing: waiting is the
// default; only choosing ungated lands.
const (
	landWait    model.Lane = "wait"
	landUngated model.Lane = "ungated"
)

// askLand names the head, the exact commit that would land and what gates
// it, then starts `fleetwatch queue land --yes` detached.
func (l *mergeList) askLand(pc *uictx.Ctx) tea.Msg {
	h := l.head()
	if h == nil || pc.Opt.Self == "" {
		return nil
	}
	if b := l.listing.Batch; b != nil && l.bySlug(b.Slugs[0]) != nil {
		return l.askLandBatch(pc, b)
	}
	ls := &l.listing
	self, t, slug, commit := pc.Opt.Self, pc.Opt.Tree, h.Slug, h.Commit
	body := []string{"Land the queue's head, " + slug + ": the frozen commit " + kit.Short(commit) + " on " + h.Branch +
		", merged onto " + ls.Integration + " @ " + kit.Short(ls.Tip) + "; " + ls.Integration + " moves only if nothing landed meanwhile."}
	if h.Candidate != "" {
		body = append(body, "Candidate "+kit.Short(h.Candidate)+" (tree "+kit.Short(h.Tree)+").")
	}
	body = append(body, "Now: "+string(h.State)+kit.OrEmpty(" — ", whyOf(pc.Common, h))+".")
	switch h.State {
	case landing.Conflict, landing.Stale, landing.Failed, landing.NeedsReview, landing.Reviewed, landing.Approved, landing.NoChange, landing.Landed:
		// The lander would refuse: say so, and offer no landing.
		body = append(body, "⚠ it cannot land as it stands: X sends it back to its worker with a note, - takes it out of the queue.")
		return uictx.QuestionReq{Q: uictx.Question{Title: "Cannot land " + slug + " @ " + kit.Short(commit), Body: body}}
	}
	ungated := h.Ungated || len(ls.CheckNames) == 0
	var choices []model.Lane
	if ungated {
		body = append(body, "⚠ ungated: no checks in fleetwatch.yaml, so nothing verifies this change. Choose ungated to land it anyway.")
		choices = []model.Lane{landWait, landUngated}
	} else {
		body = append(body, "Checks: "+strings.Join(ls.CheckNames, ", ")+" run on the candidate unless they passed on this exact tree; it lands only if every one passes.")
	}
	body = append(body, "Runs detached: fleetwatch queue land --yes; progress in "+look.LogDir+"/land.log.")
	return uictx.QuestionReq{Q: uictx.Question{
		Title: "Land " + slug + " @ " + kit.Short(commit), Body: body, Verb: "land", Choices: choices,
		Do: func(to model.Lane, _ string) tea.Cmd {
			if ungated && to != landUngated {
				return func() tea.Msg {
					return uictx.ActionMsg{Err: errors.New("land: nothing landed; " + slug + " is ungated, and only choosing ungated lands it")}
				}
			}
			return landCmd(t, self, slug, commit, to == landUngated)
		},
	}}
}

// askLandBatch is the land dialog with `queue: {batch: N}`: it names the
// changes that ride together, their candidate and how it is checked; an
// entry ahead that cannot land waits, queued, and does not stop them.
func (l *mergeList) askLandBatch(pc *uictx.Ctx, b *landing.BatchView) tea.Msg {
	ls := &l.listing
	first := l.bySlug(b.Slugs[0])
	self, t, slug, commit := pc.Opt.Self, pc.Opt.Tree, first.Slug, first.Commit
	body := []string{"Land a batch of " + kit.Itoa(len(b.Slugs)) + ": " + strings.Join(b.Slugs, ", ") + ", merged in this order onto " +
		ls.Integration + " @ " + kit.Short(ls.Tip) + " as candidate " + kit.Short(b.Candidate) + " (tree " + kit.Short(b.Tree) + ")."}
	body = append(body, "Checks: "+strings.Join(ls.CheckNames, ", ")+" run once on the candidate; "+ls.Integration+
		" moves to it with one compare-and-swap only if every one passes. A failure is retried once, then bisected: the culprit stays queued as failed, the rest land.")
	body = append(body, "Now: "+batchLine(b)+".")
	body = append(body, "Runs detached: fleetwatch queue land --yes; progress in "+look.LogDir+"/land.log.")
	return uictx.QuestionReq{Q: uictx.Question{
		Title: "Land a batch of " + kit.Itoa(len(b.Slugs)), Body: body, Verb: "land",
		Do: func(model.Lane, string) tea.Cmd { return landCmd(t, self, slug, commit, false) },
	}}
}

// landCmd starts `fleetwatch queue land --yes` detached and says so; its
// end comes back as a landDoneMsg, so a refusal reaches the screen.
func landCmd(t *planfs.Tree, self, slug, commit string, ungated bool) tea.Cmd {
	return func() tea.Msg {
		project := t.Project
		if err := stillAt(project, slug, commit, true); err != nil {
			return uictx.ActionMsg{Err: fmt.Errorf("land: %w", err)}
		}
		args := []string{"queue", "land", "--yes", "--root", project}
		if ungated {
			args = append(args, "--ungated")
		}
		log, done, err := proc.StartDetachedWatched(t, self, "land.log", args...)
		if err != nil {
			return uictx.ActionMsg{Err: fmt.Errorf("land: %w", err)}
		}
		started := uictx.ActionMsg{Done: "landing " + slug + " @ " + kit.Short(commit) + " started (log: " + relTo(project, log) + ")"}
		return tea.BatchMsg{
			func() tea.Msg { return started },
			func() tea.Msg { return landDoneMsg{slug: slug, commit: commit, log: log, err: <-done} },
		}
	}
}

// landDoneMsg is how a landing started here ended: err is the lander's
// exit, and the last line of its log says what happened.
type landDoneMsg struct {
	slug, commit, log string
	err               error
}

// landDone puts a landing's end on the status line; a refusal or failure
// is also a notice, naming the lander's reason.
func (m *Model) landDone(msg landDoneMsg) tea.Cmd {
	last := ""
	if lines, _ := look.LogTail(msg.log, 1); len(lines) > 0 {
		last = strings.TrimPrefix(strings.TrimSpace(lines[0]), "fleetwatch: ")
	}
	reload := tea.Batch(m.requestLoad(), m.mergeIfShown())
	if msg.err == nil {
		m.setStatus("✓ "+orWords(last, "landed "+msg.slug+" @ "+kit.Short(msg.commit)), false)
		return reload
	}
	why := "landing " + msg.slug + " @ " + kit.Short(msg.commit) + " did not land: " + orWords(last, msg.err.Error())
	m.setStatus("✗ "+why, true)
	// The notice (and its bell) comes from the lander's event in the log,
	// as it does for a landing any face ran.
	return reload
}

// relTo is path from project's root, as the operator would type it.
func relTo(project, path string) string {
	return strings.TrimPrefix(path, project+"/")
}

// diff is `d`: the candidate's feature branch.
func (l *mergeList) diff(pc *uictx.Ctx) tea.Msg {
	r := l.row()
	if r == nil {
		return nil
	}
	project, slug := pc.Opt.Tree.Project, r.Slug
	return uictx.Diff("plan "+termtext.Line(slug), "plan\x00"+slug, func() (look.Diff, error) {
		return look.DiffOfPlan(project, slug)
	})
}

// mergeDetailLines is how many lines of each check's log the detail shows.
const mergeDetailLines = 15

// open is enter: the candidate's facts, each
// check with its log's tail, and the peer reviews, newest first.
func (l *mergeList) open(pc *uictx.Ctx) tea.Msg {
	r := l.row()
	if r == nil {
		return nil
	}
	t, s := pc.Opt.Tree, *r
	return uictx.Detail("merge\x00"+s.Slug, s.Slug+" · "+string(s.State), func() func(*uictx.Ctx) []string {
		logs := make([][]string, len(s.Checks))
		logErrs := make([]error, len(s.Checks))
		for i, c := range s.Checks {
			if c.Log != "" {
				logs[i], logErrs[i] = look.LogTail(c.Log, mergeDetailLines)
			}
		}
		texts := make([]string, len(s.Reviews))
		textErrs := make([]error, len(s.Reviews))
		for i, rv := range s.Reviews {
			texts[i], _, textErrs[i] = t.ReadReviewText(rv.Path)
		}
		return func(pc *uictx.Ctx) []string { return mergeDetail(pc.Common, &s, logs, logErrs, texts, textErrs) }
	})
}

func mergeDetail(cm *uictx.Common, s *landing.Status, logs [][]string, logErrs []error, texts []string, textErrs []error) []string {
	line := termtext.Line
	out := []string{
		line(s.Branch + " @ " + kit.Short(s.Commit) + " · " + kit.Plural(s.Ahead, "commit", "commits") + " ahead, " + kit.Itoa(s.Behind) + " behind base " + kit.Short(s.Base)),
	}
	if w := whyOf(cm, s); w != "" {
		out = append(out, line("why: "+w))
	}
	if s.Author != "" {
		out = append(out, line("author: "+s.Author))
	}
	switch {
	case s.ApprovedBy != "" && s.Approval != nil:
		out = append(out, line("approved by "+s.ApprovedBy+" at "+kit.Short(s.Approval.Commit)+", "+s.Approval.At.Format(time.DateTime)))
	case s.ApprovedBy != "":
		out = append(out, line("approved by "+s.ApprovedBy))
	case s.Approval != nil:
		out = append(out, line("approve by "+s.Approval.By+" of "+kit.Short(s.Approval.Commit)+" is stale: the branch moved since"))
	case cm.Opt.ReadOnly:
		out = append(out, "not approved") // a viewer's screen names no action
	default:
		out = append(out, "not approved (A approves)")
	}
	if s.Candidate != "" {
		out = append(out, line("candidate "+kit.Short(s.Candidate)+" · tree "+kit.Short(s.Tree)))
	}
	if v := s.ScopeViolations; len(v) > 0 {
		out = append(out, "", cm.St.Title.Render(line("⚠ Out of scope: "+countPaths(len(v))+" its plan's scope does not allow")))
		for _, p := range v {
			out = append(out, "  "+line(p))
		}
	}
	out = append(out, "", cm.St.Title.Render("Checks")+"  "+cm.St.Dim.Render(strings.TrimPrefix(checkLegend, "checks: ")))
	if len(s.Checks) == 0 {
		out = append(out, "  "+line(orWords(whyOf(cm, s), "no checks configured")))
	}
	for i, c := range s.Checks {
		facts := resultGlyph(c) + " " + c.Name + " " + string(c.Result)
		if c.Log != "" {
			facts += " · exit " + kit.Itoa(c.Exit) + " · " + c.Took.Round(time.Millisecond).String() + " · " + relTo(cm.Opt.Tree.Project, c.Log)
		}
		if c.Flaky {
			facts += " · flaky: it failed first, log " + relTo(cm.Opt.Tree.Project, c.FlakyLog)
		}
		if c.Note != "" {
			facts += " · " + c.Note
		}
		out = append(out, line(facts))
		if logErrs[i] != nil {
			out = append(out, "    "+line("log: "+logErrs[i].Error()))
		}
		for _, l := range logs[i] {
			out = append(out, "    "+cm.St.Dim.Render(line(l)))
		}
	}
	out = append(out, "", cm.St.Title.Render("Peer reviews, newest first"))
	if len(s.Reviews) == 0 {
		out = append(out, "  none yet (v asks another worker for one)")
	}
	for i, rv := range s.Reviews {
		head := rv.Verdict + " by " + rv.Reviewer + " at " + kit.Short(rv.Commit) + ", " + rv.At.Format(time.DateTime)
		if rv.Stale {
			head += " · stale: the branch moved since"
		}
		out = append(out, "", cm.St.Bold.Render(line(head)))
		if textErrs[i] != nil {
			out = append(out, "  "+line(textErrs[i].Error()))
			continue
		}
		for _, l := range strings.Split(strings.TrimRight(texts[i], "\n"), "\n") {
			out = append(out, line(l))
		}
	}
	return out
}
