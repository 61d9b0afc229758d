// Package plans is the cockpit's Plans pane: one lane's plans as the
// scan judged them (uictx.Ctx.D), each tier's pick order, dependencies and
// leases, the lanes beside them, the selected plan's preview below (the
// root renders it: uictx.Ctx.Preview), the filter across every lane, and
// the verbs on the selected plan (promote, park, return, complete; and
// the merge keys on its candidate in review-needed/, ui/mergekeys').
package plans

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/mergekeys"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/ui/verbs"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// Pane is the Plans pane: one lane's plans, the filter over them (in
// every lane at once), and the memo of the preview's box.
type Pane struct {
	kit.Table
	kit.Filter
	id       uictx.PaneID // its place in the tab order
	rows     []*model.BoardRow
	cols     planCols
	lane     model.Lane
	lanePick map[model.Lane]string // the plan last selected in each lane
	matched  map[model.Lane]int    // each lane's matches while a filter applies
	skipW    map[string]int        // how wide each plan's skip reason is (WhyWidth)
	measured measuredPlans         // the last measurement, for the rows it was made of
	// want is a plan to select once a scan shows it: one just written.
	want string
	// drawn is the preview's box as last drawn, by what it was drawn of.
	drawn struct {
		key   string
		lines []string
	}
}

// New is the Plans pane at id in the tab order, on the bugs lane.
func New(id uictx.PaneID) uictx.Pane {
	return &Pane{id: id, lane: model.Bugs, lanePick: map[model.Lane]string{}, matched: map[model.Lane]int{}}
}

func (p *Pane) Rebuild(pc *uictx.Ctx) {
	d := pc.D
	p.rows = p.rows[:0]
	clear(p.matched)
	if d != nil {
		p.rows = filterPlans(d, p.rows, p.lane, p.Needle(), p.matched)
	}
	p.cols = planColumns(p.Width, p.wantFor(d), p.lane.Ready())
	p.cols.parked = p.lane.Parked()
	keys := make([]string, len(p.rows))
	for i, r := range p.rows {
		keys[i] = r.Plan.Rel
	}
	c := p.cols
	cm := pc.Common
	p.SetShared(keys, sharedRows{d: d, lane: p.lane, needle: p.Needle(), cols: c}, func(i int, sel bool) string {
		return planLine(cm, d, p.rows[i], c, sel)
	})
	if p.want != "" && d.Has(p.want) {
		p.GoTo(p.want) // once: a filter hiding it leaves the cursor be
		p.want = ""
	}
}

func (p *Pane) Selected() uictx.Selection {
	if p.Cursor >= len(p.rows) {
		return uictx.Selection{}
	}
	r := p.rows[p.Cursor]
	return uictx.Selection{Rel: r.Plan.Rel, Row: r, Lease: r.Lease}
}

// Update answers the Plans pane's own keys: lanes, the filter, the
// preview, and the verbs on the selected plan.
func (p *Pane) Update(pc *uictx.Ctx, msg tea.KeyMsg) (tea.Msg, bool) {
	k := &pc.Keys.Plans
	switch {
	case key.Matches(msg, k.PrevLane):
		return p.switchLane(pc, -1), true
	case key.Matches(msg, k.NextLane):
		return p.switchLane(pc, 1), true
	case key.Matches(msg, k.PreviewDown):
		return uictx.PreviewScrollReq(1), true
	case key.Matches(msg, k.PreviewUp):
		return uictx.PreviewScrollReq(-1), true
	case key.Matches(msg, k.Preview):
		return uictx.ReaderReq{}, true
	case key.Matches(msg, k.Diff):
		return p.diff(pc), true
	case key.Matches(msg, k.New):
		return uictx.NewPlanReq{}, true
	case key.Matches(msg, k.Edit):
		return uictx.EditReq{}, true
	}
	if req, ok := p.verbKey(pc, msg); ok {
		return req, true
	}
	return mergekeys.Key(pc, msg, mergekeys.InPlans, nil)
}

func (p *Pane) SyncKeys(pc *uictx.Ctx, set uictx.SetKey) {
	k, onPlans := &pc.Keys.Plans, pc.Shown == p.id
	rel, row := pc.Target.Rel, pc.Target.Row
	lane := model.Rel(rel).Lane()
	onPlan := row != nil
	// Which lane each verb takes a plan from is the verb table's word.
	takes := func(v model.Verb) bool { return onPlan && model.RuleOf(v).Takes(lane) }
	set(&k.Promote, takes(model.Promote), "promote: select a draft")
	set(&k.Park, takes(model.Park), "park: select a ready or in-progress plan")
	set(&k.Return, takes(model.Return), "return: select a parked or in-progress plan")
	set(&k.Complete, takes(model.Complete), "complete: select an in-progress plan")
	release, recover := verbs.ReleaseRecover(pc)
	set(&k.Release, onPlans && release, "release: select a plan with a lease (u returns one without)")
	set(&k.Recover, onPlans && recover, "recover: select an expired, unreadable or left-over lease")
	set(&k.Preview, onPlan, "preview: select a plan")
	set(&k.Diff, onPlan, "diff: select a plan, a worktree or a worker")
	// The preview shows below the plans, not full screen.
	_, ph := Split(pc.Common, pc.Height-2)
	inline := onPlan && onPlans && ph > 0 && !pc.Reading
	set(&k.PreviewDown, inline, "preview: it shows below the plans on wide terminals; enter opens it")
	set(&k.PreviewUp, inline, "preview: it shows below the plans on wide terminals; enter opens it")
	set(&k.PrevLane, onPlans, "lanes: switch to the plans pane (1)")
	set(&k.NextLane, onPlans, "lanes: switch to the plans pane (1)")
	set(&k.New, onPlans && pc.D != nil, "new plan: switch to the plans pane (1)")
	set(&k.Edit, onPlans && onPlan, "edit: select a plan")
	if onPlans {
		// Synced last here: A and X are the selected plan's candidate's,
		// not the inbox's.
		mergekeys.Keys(pc, set, mergekeys.InPlans, nil)
	}
}

// planCols are the plans table's column widths for one terminal width; a
// zero width drops the column.
type planCols struct {
	slug, title, pri, val, tier, deps, who int
	parked                                 bool // the reason column says why plans were parked
}

// planColumns sizes the plans table for width w and the rows' content:
// the slug first, then what would be cut (in the ready lanes why a plan
// waits, elsewhere who holds it, then the other), the rest to the title.
// Narrow tables drop the title before cutting a reason.
func planColumns(w int, want planWant, ready bool) planCols {
	if w < 110 {
		return planColumnsAt(w, want, ready, 3, 28)
	}
	c := planColumnsAt(w, want, ready, 5, 40)
	// A tier cell is a rank or a mark under a five-letter head: a title
	// that would be cut takes that room back, under S M R F.
	if c.title < want.title {
		if n := planColumnsAt(w, want, ready, max(3, want.tier), 40); n.title > c.title {
			return n
		}
	}
	return c
}

// planColumnsAt is planColumns with tier columns tier cells wide and the
// slug capped at slugTop.
func planColumnsAt(w int, want planWant, ready bool, tier, slugTop int) planCols {
	c := planCols{pri: 3, val: 4, tier: tier}
	// Every column is charged its width and one separator, the last one
	// included, so the room has one cell more than the line.
	room := w - kit.Lead - (c.pri + 1) - (c.val + 1) - 4*(c.tier+1) + 1
	room = kit.Allot(room, kit.Col(&c.slug, want.slug, 8, slugTop))
	// Wide tables keep up to titleKeep cells for a title; the reasons get
	// the rest.
	keep := 0
	if w >= 110 {
		keep = min(titleKeep, want.title) + 1
	}
	room -= keep
	deps := kit.Col(&c.deps, want.deps, 4, room)
	who := kit.Col(&c.who, want.who, 7, room)
	if ready {
		room = kit.Allot(room, deps, who)
	} else {
		room = kit.Allot(room, who, deps)
	}
	room += keep
	switch {
	case room-1 >= 12:
		c.title = room - 1
	case c.deps > 0 && c.deps < want.deps:
		c.deps += room
	case c.who > 0 && c.who < want.who:
		c.who += room
	}
	return c
}

var tierHeads = [2][4]string{{"S", "M", "R", "F"}, {"small", "mid", "reas", "front"}}

func (c planCols) header() string {
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", kit.Lead))
	b.WriteString(kit.Fit("slug", c.slug) + " ")
	if c.title > 0 {
		b.WriteString(kit.Fit("title", c.title) + " ")
	}
	b.WriteString(kit.Fit("pri", c.pri) + " " + kit.Fit("val", c.val) + " ")
	heads := tierHeads[0]
	if c.tier >= 5 {
		heads = tierHeads[1]
	}
	for _, h := range heads {
		b.WriteString(kit.FitRight(h, c.tier) + " ")
	}
	if c.deps > 0 && c.parked {
		b.WriteString(kit.Fit("why parked", c.deps))
	} else if c.deps > 0 {
		b.WriteString(kit.Fit("deps", c.deps))
	}
	if c.who > 0 {
		b.WriteString(" " + kit.Fit("held by", c.who))
	}
	return b.String()
}

// pickable reports whether some tier's bare pick would take the row.
func pickable(r *model.BoardRow) bool {
	for _, c := range r.Tiers {
		if c.Rank > 0 {
			return true
		}
	}
	return false
}

// tierCell is the compact symbol for one tier: its rank (with `?` when the
// fit is unknown), `↑` overqualified, `↓` underqualified, `·` fit but held
// back (deps, lease, person); outside the ready lanes, `✓` good and `?`
// unknown fit.
func tierCell(r *model.BoardRow, k, width int) (text string, ok bool) {
	c := r.Tiers[k]
	switch {
	case c.Rank > 0:
		s := strconv.Itoa(c.Rank) + unknownMark(c)
		if len(s) > width {
			// Never cut a rank into a smaller number: 1234 in 3 cells is 99+.
			s = strings.Repeat("9", width-1) + "+"
		}
		return s, true
	case c.Fit == model.FitOverqualified:
		return "↑", false
	case c.Fit == model.FitUnderqualified:
		return "↓", false
	case !r.Plan.Lane.Ready() && c.Fit == model.FitGood:
		return "✓", false
	case !r.Plan.Lane.Ready():
		return "?", false
	}
	return "·", false
}

// unknownMark is "?" after a rank whose fit is unknown.
func unknownMark(c model.TierCell) string {
	if c.Fit == model.FitUnknown {
		return "?"
	}
	return ""
}

func depsText(r *model.BoardRow) (string, bool) {
	if r.Plan.Lane.Ready() {
		// Shown where the reason a plan waits is shown: workers skip it.
		if r.Problem != "" {
			return "SKIPPED " + termtext.Line(r.Problem), false
		}
	}
	switch {
	case len(r.Plan.Header.DependsOn) == 0:
		return "none", true
	case r.Deps.Met:
		return "met", true
	}
	return "UNMET " + termtext.Line(model.UnmetList(r.Deps)), false
}

// WhoText names who holds the plan: the lease owner and time left, or the
// person it is assigned to.
func WhoText(r *model.BoardRow, now float64) (string, int) {
	l := r.Lease
	switch {
	case l != nil && l.Corrupt != "":
		return "lease unreadable", -1
	case l != nil && l.Awaiting == model.AwaitApproval:
		return termtext.Line(l.AgentID) + " " + l.AwaitingText(), 1
	case l != nil && l.Awaiting != "":
		return termtext.Line(l.AwaitingText()), 1
	case l != nil && l.Active(now):
		return termtext.Line(l.AgentID) + " " + kit.Span(l.ExpiresAt-now) + kit.HeldOn(l), 1
	case l != nil:
		return "EXPIRED " + kit.OwnerText(l), -1
	}
	if p := r.Person(); p != "" {
		return "@" + termtext.Line(p), 0
	}
	return "", 0
}

// planLine renders one row; a selected row keeps its colours under the
// highlight.
func planLine(cm *uictx.Common, d *uictx.Data, r *model.BoardRow, c planCols, selected bool) string {
	plain := cm.Plain
	style := func(s string, st func(...string) string) string {
		if plain {
			return s
		}
		return st(s)
	}
	var b strings.Builder
	// A plan check warns about is marked in the gutter: its preview says why.
	gut := kit.Gutter(selected)
	if len(d.LintOf(r.Plan.Rel)) > 0 {
		gut = gut[:len(gut)-1] + style("!", cm.St.Warn.Render)
	}
	b.WriteString(gut)
	live := pickable(r)
	mark := " "
	switch {
	case live:
		mark = style("●", cm.St.Good.Render)
	case r.Plan.Lane.Ready():
		mark = style("○", cm.St.Dim.Render)
	}
	b.WriteString(mark + " ")
	dimIf := func(s string) string {
		if live || !r.Plan.Lane.Ready() {
			return s
		}
		return style(s, cm.St.Dim.Render)
	}
	b.WriteString(dimIf(kit.Fit(termtext.Line(r.Plan.Slug), c.slug)) + " ")
	if c.title > 0 {
		b.WriteString(dimIf(kit.Fit(termtext.Line(r.Plan.Header.Title), c.title)) + " ")
	}
	b.WriteString(kit.Fit(r.Plan.Header.Priority, c.pri) + " " + kit.Fit(valueShort(r.Plan.Header.Value), c.val) + " ")
	if p := r.Person(); p != "" && r.Plan.Lane.Ready() {
		b.WriteString(style(kit.Fit("person: "+termtext.Line(p), 4*(c.tier+1)-1), cm.St.Warn.Render) + " ")
	} else {
		for k := range model.Tiers {
			s, ok := tierCell(r, k, c.tier)
			cell := kit.FitRight(s, c.tier)
			if ok {
				cell = style(cell, cm.St.Good.Render)
			} else {
				cell = style(cell, cm.St.Dim.Render)
			}
			b.WriteString(cell + " ")
		}
	}
	if deps, met := WhyText(d, r); met && c.deps > 0 {
		b.WriteString(kit.Fit(deps, c.deps))
	} else if c.deps > 0 {
		b.WriteString(style(kit.Fit(deps, c.deps), cm.St.Bad.Render))
	}
	if c.who > 0 {
		who, state := WhoText(r, cm.Now)
		cell := kit.Fit(who, c.who)
		switch state {
		case 1:
			cell = style(cell, cm.St.Info.Render)
		case -1:
			cell = style(cell, cm.St.Bad.Render)
		}
		b.WriteString(" " + cell)
	}
	return b.String()
}

func valueShort(v string) string {
	if v == "medium" {
		return "med"
	}
	return v
}

// laneTitle abbreviates lane names for the one-line strip of narrow terminals.
var laneShort = map[model.Lane]string{
	model.Drafts: "draft", model.Bugs: "bugs", model.Features: "feat", model.InProgress: "prog",
	model.ReviewNeeded: "rev", model.Ambiguous: "amb", model.Blocked: "blkd", model.Completed: "done",
}

// matches reports whether a row contains the filter text (already lower case).
func matches(r *model.BoardRow, f string) bool {
	if f == "" {
		return true
	}
	h := &r.Plan.Header
	if kit.AnyContains(f, r.Plan.Slug, h.Title, h.AssigneeRaw, h.PreferredRaw) {
		return true
	}
	return r.Lease != nil && (kit.ContainsFold(r.Lease.AgentID, f) || kit.RemoteLease(r.Lease) && kit.ContainsFold(r.Lease.Host, f))
}

// measurePlans is the widest slug, title, reason, holder and rank among
// rows. Ten thousand rows are measured on every refresh, so it allocates
// nothing per row: a string no longer in bytes than the widest so far
// cannot be wider.
func (p *Pane) measurePlans(d *uictx.Data, rows []*model.BoardRow) planWant {
	w := planWant{slug: 4, title: 5, deps: 4, tier: 1}
	if p.skipW == nil || d == nil || len(p.skipW) > 2*len(d.Board.Rows)+64 {
		p.skipW = map[string]int{} // plans gone since are dropped
	}
	for _, r := range rows {
		if len(r.Plan.Slug) > w.slug {
			w.slug = max(w.slug, kit.CellWidth(r.Plan.Slug))
		}
		if t := r.Plan.Header.Title; len(t) > w.title {
			w.title = max(w.title, kit.CellWidth(t))
		}
		for _, c := range r.Tiers {
			if c.Rank > 0 {
				w.tier = max(w.tier, digits(c.Rank)+len(unknownMark(c)))
			}
		}
		w.deps = max(w.deps, WhyWidth(d, r, p.skipW, w.deps))
		who := 0
		switch l := r.Lease; {
		case l != nil && l.Corrupt != "":
			who = len("lease unreadable")
		case l != nil && l.Awaiting != "":
			who = kit.CellWidth(l.AgentID) + 1 + kit.CellWidth(l.AwaitingText())
		case l != nil:
			// Live or expired: the wider of the two, so a lease running
			// out does not move the columns.
			who = max(kit.CellWidth(l.AgentID)+1+countdownWidth, len("EXPIRED ")+kit.CellWidth(l.AgentID))
			if kit.RemoteLease(l) {
				who += kit.CellWidth(kit.HeldOn(l)) // the host it is held on
			}
		case r.Person() != "":
			who = 1 + kit.CellWidth(r.Person())
		}
		if who > 0 {
			w.who = max(w.who, who, len("held by"))
		}
	}
	return w
}

// planWant is what the plans shown need, column by column; tier is the
// widest rank cell ("12?").
type planWant struct{ slug, title, deps, who, tier int }

// countdownWidth is the widest countdown span prints below a day: 59m59s.
const countdownWidth = 6

// measuredPlans is a measurement and what it was made of: the same data,
// lane and filter give the same rows, so a rebuild for another reason (a
// resize, the workers' state, a pane's keys) measures nothing again.
type measuredPlans struct {
	d      *uictx.Data
	lane   model.Lane
	needle string
	want   planWant
}

// wantFor is measurePlans of the rows just selected, remembered.
func (p *Pane) wantFor(d *uictx.Data) planWant {
	key := measuredPlans{d: d, lane: p.lane, needle: p.Needle()}
	if d == nil || p.measured.d != key.d || p.measured.lane != key.lane || p.measured.needle != key.needle {
		key.want = p.measurePlans(d, p.rows)
		p.measured = key
	}
	return p.measured.want
}

// titleKeep is how many cells of title a wide plans table keeps however
// long the reasons are; below it, the reason is cut.
const titleKeep = 12

// WhyWidth is cellWidth(WhyText(r)) without building the text, or any
// width up to atMost when the text is no wider (all the caller needs).
// Why a ready plan is skipped is the board's Problem, measured once per
// plan (skips).
func WhyWidth(d *uictx.Data, r *model.BoardRow, skips map[string]int, atMost int) int {
	if r.Plan.Lane.Parked() {
		s, _ := WhyText(d, r)
		return kit.CellWidth(s)
	}
	if r.Plan.Lane.Ready() && r.Problem != "" {
		n, ok := skips[r.Plan.Rel]
		if !ok {
			n = kit.CellWidth(r.Problem)
			skips[r.Plan.Rel] = n
		}
		return len("SKIPPED ") + n
	}
	switch {
	case len(r.Plan.Header.DependsOn) == 0:
		return len("none")
	case r.Deps.Met:
		return len("met")
	}
	unmet := r.Deps.Unmet
	// Bytes bound cells from above: only a list longer in bytes than
	// atMost is measured cell by cell.
	n := len("UNMET ") + 2*max(0, len(unmet)-1)
	for i := range unmet {
		n += len(unmet[i].Slug) + len(" ()") + len(unmet[i].Reason)
	}
	if n <= atMost {
		return n
	}
	n = len("UNMET ") + 2*max(0, len(unmet)-1)
	for i := range unmet {
		n += kit.CellWidth(unmet[i].Slug) + len(" ()") + kit.CellWidth(unmet[i].Reason)
	}
	return n
}

// digits is how many digits n > 0 has, counted without formatting it.
func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// filterPlans appends lane's rows that match f to dst; while a filter
// applies it looks in every lane and counts each lane's matches.
func filterPlans(d *uictx.Data, dst []*model.BoardRow, lane model.Lane, f string, matched map[model.Lane]int) []*model.BoardRow {
	if f == "" {
		rows := d.Board.Lane(lane)
		for i := range rows {
			dst = append(dst, &rows[i])
		}
		return dst
	}
	for _, l := range model.Lanes {
		rows := d.Board.Lane(l)
		for i := range rows {
			if matches(&rows[i], f) {
				matched[l]++
				if l == lane {
					dst = append(dst, &rows[i])
				}
			}
		}
	}
	return dst
}

// laneCount is a lane's count for the lane list: its plans, or while a
// filter applies its matches of its plans ("3/12").
func (p *Pane) laneCount(d *uictx.Data, l model.Lane) string {
	if !p.Active() {
		return kit.Itoa(LaneCount(d, l))
	}
	return kit.Itoa(p.matched[l]) + "/" + kit.Itoa(LaneCount(d, l))
}

// laneWithMatches moves to the first lane with a match when the shown lane
// has none, so enter on a filter lands on what it found.
func (p *Pane) LaneWithMatches() {
	if p.Len() > 0 || !p.Active() {
		return
	}
	for _, l := range model.Lanes {
		if p.matched[l] > 0 {
			p.lanePick[p.lane] = p.Key()
			p.lane = l
			p.Cursor, p.Offset, p.Keys = 0, 0, nil
			return
		}
	}
}

func (p *Pane) View(pc *uictx.Ctx, h int) []string {
	d := pc.D
	rows := pc.Rows(&p.Table, "")
	if p.Len() == 0 {
		msg := "no plans in " + string(p.lane) + "/"
		switch {
		case d == nil:
			msg = "reading the tree…"
		case p.Active():
			msg = "no plan in " + string(p.lane) + "/ matches /" + termtext.Line(p.Input.Value()) + " (esc clears)"
		}
		rows[0] = "  " + pc.St.Dim.Render(msg)
	}
	table := append([]string{pc.St.Header.Render(p.cols.header())}, rows...)
	if !pc.Wide {
		return append([]string{p.laneStrip(pc.Common, d)}, table...)
	}
	th, ph := Split(pc.Common, h)
	title := string(p.lane) + " · " + kit.Itoa(LaneCount(d, p.lane))
	if p.Active() {
		title = string(p.lane) + " · " + kit.Itoa(p.Len()) + " of " + kit.Itoa(LaneCount(d, p.lane)) + " · /" + termtext.Line(p.Input.Value())
	}
	right := pc.Box(title, p.ScrollHint(), table, pc.Cols-LaneBoxWidth, th, true)
	if ph > 0 {
		right = append(right, p.previewBox(pc, ph)...)
	}
	return kit.Beside(p.laneBox(pc, h), right)
}

// LaneCount is how many plans lane l holds.
func LaneCount(d *uictx.Data, l model.Lane) int {
	if d == nil {
		return 0
	}
	return d.Board.Counts[l]
}

func (p *Pane) laneBox(pc *uictx.Ctx, h int) []string {
	var lines []string
	for _, l := range model.Lanes {
		n := p.laneCount(pc.D, l)
		// A long "matches/plans" count takes room from the name.
		name := LaneBoxWidth - 4 - max(5, len(n))
		line := kit.Gutter(l == p.lane) + kit.Fit(string(l), name) + kit.FitRight(n, max(5, len(n)))
		if l == p.lane {
			line = pc.Highlight(line)
		}
		lines = append(lines, line)
	}
	lines = append(lines, "", pc.St.Dim.Render(" ←/→ switch lanes"))
	return pc.Box("Lanes", "", lines, LaneBoxWidth, h, false)
}

// previewBox is the selected plan's preview below the table.
func (p *Pane) previewBox(c *uictx.Ctx, h int) []string {
	title := "preview"
	if r := p.Selected().Row; r != nil {
		title = termtext.Line(r.Plan.Rel)
	}
	hint := ""
	pv := c.Preview
	if pv.VP.TotalLineCount() > pv.VP.Height {
		hint = "ctrl+d/u scroll · enter to read all"
	}
	key := fmt.Sprint(pv.Gen, "\x00", pv.VP.YOffset, "\x00", pv.VP.Width, "\x00", pv.VP.Height, "\x00", c.Cols, "\x00", h, "\x00", title, "\x00", hint)
	if p.drawn.key == key {
		return slices.Clone(p.drawn.lines) // callers may pad the lines in place
	}
	lines := strings.Split(pv.VP.View(), "\n")
	for i := range lines {
		lines[i] = " " + lines[i]
	}
	out := c.Box(title, hint, lines, c.Cols-LaneBoxWidth, h, false)
	p.drawn.key, p.drawn.lines = key, slices.Clone(out)
	return out
}

// laneStrip is the lanes on one line for narrow terminals, abbreviated when
// the full names do not fit; the selected lane is bracketed.
func (p *Pane) laneStrip(cm *uictx.Common, d *uictx.Data) string {
	// short: 0 full names, 1 short names but the selected lane's, 2 all
	// short, 3 all short and a filter's matches without the lane's total.
	build := func(short int) string {
		var parts []string
		for _, l := range model.Lanes {
			name := string(l)
			if short >= 2 || short == 1 && l != p.lane {
				name = laneShort[l]
			}
			part := name + " " + p.laneCount(d, l)
			if short == 3 {
				part = name + " " + kit.Itoa(p.matched[l])
			}
			if l == p.lane {
				part = "[" + part + "]"
				if !cm.Plain {
					part = cm.St.TabActive.Render(part)
				}
			} else {
				part = " " + part + " "
			}
			parts = append(parts, part)
		}
		return strings.Join(parts, "│")
	}
	s := build(0)
	last := 2
	if p.Active() {
		last = 3
	}
	for short := 1; short <= last && ansi.StringWidth(s) > cm.Cols; short++ {
		s = build(short)
	}
	return s
}

func (p *Pane) switchLane(pc *uictx.Ctx, d int) tea.Msg {
	i := 0
	for j, l := range model.Lanes {
		if l == p.lane {
			i = j
		}
	}
	p.lanePick[p.lane] = p.Key()
	p.lane = model.Lanes[(i+d+len(model.Lanes))%len(model.Lanes)]
	p.Cursor, p.Offset = 0, 0
	p.Keys = nil
	p.Rebuild(pc)
	p.GoTo(p.lanePick[p.lane])
	return uictx.SelectedReq{}
}

// diff is `d`: the selected plan's feature branch.
func (p *Pane) diff(pc *uictx.Ctx) tea.Msg {
	r := p.Selected().Row
	if r == nil {
		return nil
	}
	project, slug := pc.Opt.Tree.Project, model.SlugOf(path.Base(r.Plan.Rel))
	return uictx.Diff("plan "+termtext.Line(slug), "plan\x00"+slug, func() (look.Diff, error) {
		return look.DiffOfPlan(project, slug)
	})
}

// OpenOnFirstLane starts the pane on the first lane that holds plans, in
// the lanes' order, so nobody opens the cockpit on an empty one; on an
// empty tree it stays on the first lane.
func (p *Pane) OpenOnFirstLane(d *uictx.Data) {
	if LaneCount(d, p.lane) > 0 {
		return
	}
	for _, l := range model.Lanes {
		if LaneCount(d, l) > 0 {
			p.lane = l
			return
		}
	}
}

// LaneBoxWidth is the Lanes box's, beside the plans on wide terminals.
const LaneBoxWidth = 22

// Split divides the wide plans pane between the table and the preview.
func Split(c *uictx.Common, bodyH int) (table, prev int) {
	if !c.Wide || bodyH < 20 {
		return bodyH, 0
	}
	table = max(8, bodyH*11/20)
	return table, bodyH - table
}

// WhyText is the plans table's reason column: for a parked plan the
// reason it was parked with, else its dependencies (depsText).
func WhyText(d *uictx.Data, r *model.BoardRow) (string, bool) {
	if why, ok := d.ParkReason(r); ok {
		if why == "" {
			return "parked, no reason given", false
		}
		return termtext.Line(why), false
	}
	return depsText(r)
}

// sharedRows is what the plans' rows are made of, for a hub's sessions to
// render them alike (kit.Table.SetShared): the reading, the lane, the
// filter and the columns.
type sharedRows struct {
	d      *uictx.Data
	lane   model.Lane
	needle string
	cols   planCols
}

// Lane is the lane shown.
func (p *Pane) Lane() model.Lane { return p.lane }

// ShowLane switches to lane, on its first row, remembering the plan
// selected in the lane it leaves; false when lane is the one shown.
func (p *Pane) ShowLane(lane model.Lane) bool {
	if p.lane == lane {
		return false
	}
	p.lanePick[p.lane] = p.Key()
	p.lane, p.Cursor, p.Offset, p.Keys = lane, 0, 0, nil
	return true
}

// Want selects rel once a scan shows it: a plan just written.
func (p *Pane) Want(rel string) { p.want = rel }

// Rows are the rows shown, in the lane and through the filter.
func (p *Pane) Rows() []*model.BoardRow { return p.rows }

// Matched is each lane's matches while a filter applies.
func (p *Pane) Matched() map[model.Lane]int { return p.matched }

// Widths are the slug and deps columns' widths, and the widest cells of
// rows as a rebuild measures them (the tests hold them to each other).
func (p *Pane) Widths(d *uictx.Data, rows []*model.BoardRow) (slug, deps, wantSlug, wantDeps int) {
	w := p.measurePlans(d, rows)
	return p.cols.slug, p.cols.deps, w.slug, w.deps
}
