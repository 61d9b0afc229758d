package ui

import (
	"strconv"
	"strings"

	"fleetwatch/internal/termtext"
	"fleetwatch/model"
)

// planCols are the plans table's column widths for one terminal width; a
// zero width drops the column.
type planCols struct {
	slug, title, pri, val, tier, deps, who int
	parked                                 bool // the reason column says why plans were parked
}

// lead is the cursor gutter plus the pickable mark.
const lead = 4

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
	room := w - lead - (c.pri + 1) - (c.val + 1) - 4*(c.tier+1) + 1
	room = allot(room, colWant{&c.slug, want.slug, 8, slugTop})
	// Wide tables keep up to titleKeep cells for a title; the reasons get
	// the rest.
	keep := 0
	if w >= 110 {
		keep = min(titleKeep, want.title) + 1
	}
	room -= keep
	deps := colWant{&c.deps, want.deps, 4, room}
	who := colWant{&c.who, want.who, 7, room}
	if ready {
		room = allot(room, deps, who)
	} else {
		room = allot(room, who, deps)
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
	b.WriteString(strings.Repeat(" ", lead))
	b.WriteString(fit("slug", c.slug) + " ")
	if c.title > 0 {
		b.WriteString(fit("title", c.title) + " ")
	}
	b.WriteString(fit("pri", c.pri) + " " + fit("val", c.val) + " ")
	heads := tierHeads[0]
	if c.tier >= 5 {
		heads = tierHeads[1]
	}
	for _, h := range heads {
		b.WriteString(fitRight(h, c.tier) + " ")
	}
	if c.deps > 0 && c.parked {
		b.WriteString(fit("why parked", c.deps))
	} else if c.deps > 0 {
		b.WriteString(fit("deps", c.deps))
	}
	if c.who > 0 {
		b.WriteString(" " + fit("held by", c.who))
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

// whoText names who holds the plan: the lease owner and time left, or the
// person it is assigned to.
func whoText(r *model.BoardRow, now float64) (string, int) {
	l := r.Lease
	switch {
	case l != nil && l.Corrupt != "":
		return "lease unreadable", -1
	case l != nil && l.Awaiting == model.AwaitApproval:
		return termtext.Line(l.AgentID) + " " + l.AwaitingText(), 1
	case l != nil && l.Awaiting != "":
		return termtext.Line(l.AwaitingText()), 1
	case l != nil && l.Active(now):
		return termtext.Line(l.AgentID) + " " + span(l.ExpiresAt-now) + heldOn(l), 1
	case l != nil:
		return "EXPIRED " + ownerText(l), -1
	}
	if p := r.Person(); p != "" {
		return "@" + termtext.Line(p), 0
	}
	return "", 0
}

// planLine renders one row; a selected row keeps its colours under the
// highlight.
func (m *Model) planLine(r *model.BoardRow, c planCols, selected bool) string {
	plain := m.plain
	style := func(s string, st func(...string) string) string {
		if plain {
			return s
		}
		return st(s)
	}
	var b strings.Builder
	// A plan check warns about is marked in the gutter: its preview says why.
	gut := gutter(selected)
	if len(m.lintOf(r.Plan.Rel)) > 0 {
		gut = gut[:len(gut)-1] + style("!", m.st.Warn.Render)
	}
	b.WriteString(gut)
	live := pickable(r)
	mark := " "
	switch {
	case live:
		mark = style("●", m.st.Good.Render)
	case r.Plan.Lane.Ready():
		mark = style("○", m.st.Dim.Render)
	}
	b.WriteString(mark + " ")
	dimIf := func(s string) string {
		if live || !r.Plan.Lane.Ready() {
			return s
		}
		return style(s, m.st.Dim.Render)
	}
	b.WriteString(dimIf(fit(termtext.Line(r.Plan.Slug), c.slug)) + " ")
	if c.title > 0 {
		b.WriteString(dimIf(fit(termtext.Line(r.Plan.Header.Title), c.title)) + " ")
	}
	b.WriteString(fit(r.Plan.Header.Priority, c.pri) + " " + fit(valueShort(r.Plan.Header.Value), c.val) + " ")
	if p := r.Person(); p != "" && r.Plan.Lane.Ready() {
		b.WriteString(style(fit("person: "+termtext.Line(p), 4*(c.tier+1)-1), m.st.Warn.Render) + " ")
	} else {
		for k := range model.Tiers {
			s, ok := tierCell(r, k, c.tier)
			cell := fitRight(s, c.tier)
			if ok {
				cell = style(cell, m.st.Good.Render)
			} else {
				cell = style(cell, m.st.Dim.Render)
			}
			b.WriteString(cell + " ")
		}
	}
	if deps, met := m.whyText(r); met && c.deps > 0 {
		b.WriteString(fit(deps, c.deps))
	} else if c.deps > 0 {
		b.WriteString(style(fit(deps, c.deps), m.st.Bad.Render))
	}
	if c.who > 0 {
		who, state := whoText(r, m.now)
		cell := fit(who, c.who)
		switch state {
		case 1:
			cell = style(cell, m.st.Info.Render)
		case -1:
			cell = style(cell, m.st.Bad.Render)
		}
		b.WriteString(" " + cell)
	}
	return m.finish(b.String(), selected)
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
	if anyContains(f, r.Plan.Slug, h.Title, h.AssigneeRaw, h.PreferredRaw) {
		return true
	}
	return r.Lease != nil && (containsFold(r.Lease.AgentID, f) || remoteLease(r.Lease) && containsFold(r.Lease.Host, f))
}
