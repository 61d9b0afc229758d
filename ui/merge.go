package ui

// The Merge pane: every candidate and queue entry as the engine derives
// them (landing.List), and the keys that carry a change from review to the
// integration branch. The pane never decides a state: it shows the
// engine's words and asks the engine to act.

import (
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"fleetwatch/internal/termtext"
	"fleetwatch/landing"
	"fleetwatch/model"
)

// mergeList is the Merge pane and all its state: the last listing, its
// request (one at a time, then once more) and its slow tick.
type mergeList struct {
	table
	paneFilter
	req     refresh
	listing landing.Listing
	err     error
	loaded  bool
	ticking bool  // a mergeTickMsg is pending
	shown   []int // the items the filter lets through, in listing order
	cols    mergeCols
	want    string // a slug to select once the listing shows it (a notice's)
}

// mergeMsg is one reading of the candidates and the queue.
type mergeMsg struct {
	listing landing.Listing
	err     error
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

// readMerge is mergeCmd's reading, shared with the hub: queue entries
// first, by place; the engine's order otherwise. Sorted here, once, since
// sessions share the listing.
func readMerge(project string) mergeMsg {
	l, err := landing.List(project)
	if err == nil {
		slices.SortStableFunc(l.Items, byPosition)
	}
	return mergeMsg{listing: l, err: err}
}

func mergeTickCmd() tea.Cmd {
	return tea.Tick(mergeEvery, func(t time.Time) tea.Msg { return mergeTickMsg(t) })
}

// requestMerge reads the queue, one reading at a time.
func (m *Model) requestMerge() tea.Cmd {
	if m.sub != nil {
		m.sub.poke(kindMerge.set())
		return nil
	}
	return m.merge.req.request(mergeCmd(m.opt.Tree.Project))
}

// mergeIfShown reads the queue when the pane shows it; hidden, it is read
// when shown again.
func (m *Model) mergeIfShown() tea.Cmd {
	if m.mergeShown() {
		return m.requestMerge()
	}
	return nil
}

func (m *Model) mergeLoaded(msg mergeMsg) tea.Cmd {
	l := &m.merge
	again := l.req.done()
	l.loaded, l.err = true, msg.err
	if msg.err == nil {
		l.listing = msg.listing
		if !slices.IsSortedFunc(l.listing.Items, byPosition) {
			// Sorted on a copy: a hub's listing is every session's.
			l.listing.Items = slices.Clone(l.listing.Items)
			slices.SortStableFunc(l.listing.Items, byPosition)
		}
	}
	l.rebuild(m)
	// A notice's candidate is looked for in one reading: later, the
	// cursor is the operator's.
	l.want = ""
	m.syncKeys()
	cmds := []tea.Cmd{m.lookForNotices(fromMerge)}
	if again {
		cmds = append(cmds, m.requestMerge())
	}
	return tea.Batch(append(cmds, m.mergeTick())...)
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
	if m.sub != nil || m.merge.ticking || !m.mergeWatched() {
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

func (l *mergeList) setSize(w, h int) {
	// Less the integration line above the table and the legend below.
	l.table.setSize(w, h-2)
}

// checkLegend says what each check glyph means, below the table.
const checkLegend = "checks: ✓ pass  ✗ fail  ! error  ◷ timeout  · missing  … running"

func (l *mergeList) rebuild(m *Model) {
	f := l.needle()
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
	l.cols = mergeColumns(l.width, items, l.shown)
	c := l.cols
	l.set(keys, func(m *Model, i int, sel bool) string {
		return m.mergeLine(&m.merge.listing.Items[m.merge.shown[i]], c, sel)
	})
	if l.want != "" && l.loaded && l.goTo(l.want) {
		l.want = ""
	}
}

func mergeMatches(s *landing.Status, f string) bool {
	rev := ""
	if len(s.Reviews) > 0 {
		rev = s.Reviews[0].Reviewer + " " + s.Reviews[0].Verdict
	}
	return anyContains(f, s.Slug, string(s.State), s.Why, s.ApprovedBy, s.Commit, s.Branch, rev, strings.Join(s.ConflictPaths, " "))
}

// row is the selected candidate, nil when there is none.
func (l *mergeList) row() *landing.Status {
	if l.cursor >= len(l.shown) {
		return nil
	}
	return &l.listing.Items[l.shown[l.cursor]]
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

// selected offers the key map nothing: the plan verbs stay off here, where
// A, X, + and - act through the landing engine.
func (l *mergeList) selected() selection { return selection{} }

func (l *mergeList) syncKeys(m *Model, set setKey) {
	k := &m.keys.Merge
	here := m.pane == mergePane
	r := l.row()
	onRow := here && r != nil
	live := onRow && r.State != landing.Landed && r.Commit != ""
	m.candidateKeys(set)
	switch {
	case m.opt.Self == "":
		set(&k.Peer, false, "peer review: this UI does not know its own binary, so it cannot start one")
	default:
		set(&k.Peer, live, "peer review: select a candidate with a branch")
	}
	set(&k.Remove, onRow && r.Position != nil, "remove: select a queued entry")
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
		return "add: " + termtext.Line(r.Slug) + " is in the queue already, at " + itoa(*r.Position)
	case r.Approval != nil && r.Approval.Stale:
		return "add: " + termtext.Line(r.Slug) + "'s approval is stale (the branch moved); approve it again (A)"
	}
	return "add: only approved candidates join the queue; approve " + termtext.Line(r.Slug) + " first (A)"
}

func (l *mergeList) update(m *Model, msg tea.KeyMsg) (tea.Cmd, bool) {
	k := &m.keys.Merge
	switch {
	case key.Matches(msg, k.Approve):
		m.askApprove()
	case key.Matches(msg, k.NeedsWork):
		return m.askNeedsWork(), true
	case key.Matches(msg, k.Peer):
		return m.startPeer(), true
	case key.Matches(msg, k.Add):
		return m.queueAdd(), true
	case key.Matches(msg, k.Remove):
		return m.queueRemove(), true
	case key.Matches(msg, k.Land):
		m.askLand()
	case key.Matches(msg, k.Open):
		return m.openMerge(), true
	case key.Matches(msg, k.Diff):
		return m.diffMerge(), true
	default:
		return nil, false
	}
	return nil, true
}

func (l *mergeList) view(m *Model, h int) []string {
	empty := "no candidates: a plan in review-needed/ whose feature/<slug> branch is ahead of the integration branch shows here"
	switch {
	case !l.loaded:
		empty = "reading the merge queue…"
	case l.err != nil:
		empty = "no candidates to show (the line above says why)"
	}
	out := []string{" " + m.mergeInfo()}
	// The gate's own notices (a move the queue did not make, checks that
	// differ from the committed ones), one line each, above the table.
	for _, n := range l.listing.Notices {
		if len(out) >= h/2 {
			break
		}
		line := "⚠ " + termtext.Line(n)
		if !m.plain {
			line = m.st.Bad.Render(line)
		}
		out = append(out, " "+line)
	}
	out = append(out, m.tableBox(m.filterTitle("Merge", &l.paneFilter), l.cols.header(), &l.table, h-1-len(out), m.emptyText(&l.paneFilter, empty))...)
	return append(out, " "+m.st.Dim.Render(checkLegend))
}

// mergeInfo is the line above the table: the integration branch and its
// tip, how many are queued, and what gates a landing.
func (m *Model) mergeInfo() string {
	l := &m.merge.listing
	if err := m.merge.err; err != nil {
		// The last good reading stays below, said to be old.
		warn := "⚠ merge queue: " + termtext.Line(err.Error())
		if l.Integration != "" {
			warn += " (rows from the last reading)"
		}
		if !m.plain {
			warn = m.st.Bad.Render(warn)
		}
		return warn
	}
	if !m.merge.loaded {
		return m.st.Dim.Render("integration branch: not read yet")
	}
	s := "integration " + termtext.Line(l.Integration) + " @ " + short(l.Tip)
	queued := 0
	for i := range l.Items {
		if l.Items[i].Position != nil {
			queued++
		}
	}
	s += " · " + itoa(queued) + " queued"
	gate := " · checks: " + termtext.Line(strings.Join(l.CheckNames, ", "))
	if len(l.CheckNames) == 0 {
		gate = " · ungated (no checks in fleetwatch.yaml)"
		if !m.plain {
			gate = m.st.Warn.Render(gate)
		}
	}
	return s + gate
}

// short is a commit's first seven digits, "—" for none.
func short(commit string) string {
	if commit == "" {
		return "—"
	}
	return termtext.Line(commit[:min(7, len(commit))])
}

type mergeCols struct{ slug, state, tip, ab, reviewed, approved, checks, why int }

// mergeWhyFloor is the room the reason keeps before the review and
// approval columns take theirs: a conflict's paths or "ungated" matter
// more than who reviewed.
const mergeWhyFloor = 20

// mergeColumns sizes the table for width w and the items shown.
func mergeColumns(w int, items []landing.Status, shown []int) mergeCols {
	slug, ab, rev, appr, checks := len("slug"), len("+/−"), len("reviewed"), len("approved"), len("checks")
	for _, j := range shown {
		s := &items[j]
		slug, ab = max(slug, cellWidth(s.Slug)), max(ab, cellWidth(aheadBehind(s)))
		rev, appr = max(rev, cellWidth(reviewedCell(s))), max(appr, cellWidth(approvedCell(s)))
		checks = max(checks, len(s.Checks))
	}
	c := mergeCols{state: len("needs review"), tip: 7}
	room := w - mergeLead + 1 - (c.state + 1) - (c.tip + 1) - mergeWhyFloor
	room = allot(room, colWant{&c.slug, slug, 8, 32}, colWant{&c.ab, ab, 5, 11}, colWant{&c.checks, checks, 6, 24},
		colWant{&c.approved, appr, 8, 16}, colWant{&c.reviewed, rev, 8, 28})
	c.why = max(0, room-1+mergeWhyFloor)
	return c
}

// mergeLead is the gutter and the queue position before the slug.
const mergeLead = 5

func (c mergeCols) header() string {
	h := "   # " + fit("slug", c.slug) + " " + fit("state", c.state) + " " + fit("tip", c.tip) + " " + fit("+/−", c.ab) + " "
	if c.reviewed > 0 {
		h += fit("reviewed", c.reviewed) + " "
	}
	if c.approved > 0 {
		h += fit("approved", c.approved) + " "
	}
	return h + fit("checks", c.checks) + " " + fit("why", c.why)
}

func (m *Model) mergeLine(s *landing.Status, c mergeCols, selected bool) string {
	var b strings.Builder
	b.WriteString(gutter(selected))
	pos := ""
	if s.Position != nil {
		pos = itoa(*s.Position)
	}
	b.WriteString(fitRight(pos, 2) + " ")
	b.WriteString(fit(termtext.Line(s.Slug), c.slug) + " ")
	b.WriteString(m.stateCell(s.State, c.state) + " ")
	b.WriteString(fit(short(s.Commit), c.tip) + " ")
	b.WriteString(fit(aheadBehind(s), c.ab) + " ")
	if c.reviewed > 0 {
		b.WriteString(fit(termtext.Line(reviewedCell(s)), c.reviewed) + " ")
	}
	if c.approved > 0 {
		b.WriteString(fit(termtext.Line(approvedCell(s)), c.approved) + " ")
	}
	b.WriteString(m.checksCell(s, c.checks) + " ")
	why := termtext.Line(m.whyOf(s))
	if len(s.ScopeViolations) > 0 {
		mark := "⚠ " + countPaths(len(s.ScopeViolations)) + " out of scope"
		why = mark + orEmpty(" · ", why)
	}
	b.WriteString(fit(why, c.why))
	return m.finish(b.String(), selected)
}

// stateCell is a state in the engine's words, coloured by what it asks of
// a person; the word alone says it under NO_COLOR.
func (m *Model) stateCell(st landing.State, w int) string {
	cell := fit(string(st), w)
	if m.plain {
		return cell
	}
	switch st {
	case landing.Ready, landing.Landed:
		return m.st.Good.Render(cell)
	case landing.Failed, landing.Conflict:
		return m.st.Bad.Render(cell)
	case landing.Stale:
		return m.st.Warn.Render(cell)
	case landing.Checking, landing.Queued:
		return m.busy().Render(cell)
	}
	return cell
}

// busy is the colour of work under way (checking, queued, a running
// check): the diff's hunk cyan.
func (m *Model) busy() lipgloss.Style {
	return m.r.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "#0E7490", Dark: "#56B6C2"})
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

func (m *Model) checksCell(s *landing.Status, w int) string {
	if s.State == landing.NoChange {
		return fit("", w) // no commit of its own: no check of it
	}
	if len(s.Checks) == 0 {
		word := "—"
		if s.Ungated {
			word = "ungated"
		}
		return fit(word, w)
	}
	var b strings.Builder
	for _, c := range s.Checks {
		g := checkGlyph(c.Result)
		if !m.plain {
			switch c.Result {
			case landing.Pass:
				g = m.st.Good.Render(g)
			case landing.Fail, landing.Error, landing.Timeout:
				g = m.st.Bad.Render(g)
			case landing.Running:
				g = m.busy().Render(g)
			}
		}
		b.WriteString(g)
	}
	return fit(b.String(), w)
}

// countPaths is "1 path", "3 paths".
func countPaths(n int) string {
	if n == 1 {
		return "1 path"
	}
	return itoa(n) + " paths"
}

// aheadBehind is "+3 −1": commits on the branch and not on the
// integration branch, and the other way round.
func aheadBehind(s *landing.Status) string {
	return "+" + itoa(s.Ahead) + " −" + itoa(s.Behind)
}

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

// whyOf is the state's reason in the engine's words, with the
// conflicting paths when the reason does not name them.
func (m *Model) whyOf(s *landing.Status) string {
	why := s.Why
	if s.State == landing.Approved && s.ApprovedBy != "" {
		// The engine names the CLI's verb; here the key does it, and a
		// viewer's screen names no action.
		why = "approved by " + s.ApprovedBy + "; + queues it"
		if m.opt.ReadOnly {
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
