package ui

import (
	"slices"
	"strings"
	"time"

	"fleetwatch/internal/termtext"
	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/workers"
)

// sortLeases orders leases as an operator triages them: unreadable and
// expired first, then by time left.
func sortLeases(ls []model.Lease, now float64) []model.Lease {
	out := slices.Clone(ls)
	state := func(l *model.Lease) int {
		switch {
		case l.Corrupt != "":
			return 0
		case !l.Active(now):
			return 1
		}
		return 2
	}
	slices.SortStableFunc(out, func(a, b model.Lease) int {
		if sa, sb := state(&a), state(&b); sa != sb {
			return sa - sb
		}
		switch {
		case a.ExpiresAt < b.ExpiresAt:
			return -1
		case a.ExpiresAt > b.ExpiresAt:
			return 1
		}
		return strings.Compare(a.Rel, b.Rel)
	})
	return out
}

type leaseCols struct{ plan, owner, origin, claimed, expires int }

// leaseColumns sizes the leases table for width w and the leases shown:
// the owner first, then the plan, then where it came from; the plan takes
// what is left.
func leaseColumns(w int, rows []model.Lease) leaseCols {
	plan, owner, origin, expires := len("plan"), len("owner"), 0, 18
	for i := range rows {
		l := &rows[i]
		plan, owner = max(plan, cellWidth(l.Rel)), max(owner, cellWidth(ownerText(l)))
		// An inbox-held lease says what it waits for, in words.
		expires = max(expires, min(40, cellWidth(l.AwaitingText())))
		if l.Origin != "" {
			origin = max(origin, len("origin"), cellWidth(l.Origin))
		}
	}
	c := leaseCols{claimed: 10, expires: expires}
	room := w - lead + 1 - (c.claimed + 1) - (c.expires + 1)
	// A remote lease's owner says where it is held: room for a host.
	room = allot(room, colWant{&c.owner, owner, 8, 40}, colWant{&c.plan, plan, 10, 60}, colWant{&c.origin, origin, origin, 60})
	c.plan += max(0, room)
	return c
}

func (c leaseCols) header() string {
	h := strings.Repeat(" ", lead) + fit("plan", c.plan) + " " + fit("owner", c.owner) + " "
	if c.origin > 0 {
		h += fit("origin", c.origin) + " "
	}
	return h + fit("claimed", c.claimed) + " " + fit("expires", c.expires)
}

func (m *Model) leaseLine(l *model.Lease, c leaseCols, selected bool) string {
	plain := m.plain
	var b strings.Builder
	b.WriteString(gutter(selected))
	mark, expires, bad := "●", "in "+span(l.ExpiresAt-m.now), false
	switch {
	case l.Awaiting != "" && l.Corrupt == "":
		// Held by the inbox: it never runs out, whatever its expires_at.
		mark, expires = "◇", l.AwaitingText()
	case l.Corrupt != "":
		mark, expires, bad = "?", "UNREADABLE", true
	case !l.Active(m.now):
		mark, expires, bad = "✗", "EXPIRED "+span(m.now-l.ExpiresAt)+" ago", true
	}
	if !plain && bad {
		mark = m.st.Bad.Render(mark)
	} else if !plain {
		mark = m.st.Good.Render(mark)
	}
	b.WriteString(mark + " ")
	plan := termtext.Line(l.Rel)
	if len(plan) > c.plan {
		// Narrow: the plan's name says more than its lane.
		plan = slugOf(plan)
	}
	b.WriteString(fit(plan, c.plan) + " " + fit(ownerText(l), c.owner) + " ")
	if c.origin > 0 {
		b.WriteString(fit(termtext.Line(l.Origin), c.origin) + " ")
	}
	claimed := ""
	if l.Corrupt == "" {
		claimed = coarse(m.now-l.ClaimedAt) + " ago"
	}
	b.WriteString(fit(claimed, c.claimed) + " ")
	cell := fit(expires, c.expires)
	if !plain && bad {
		cell = m.st.Bad.Render(cell)
	}
	b.WriteString(cell)
	return m.finish(b.String(), selected)
}

// cell is s fitted to w and a space, or nothing for a hidden column (w 0).
func cell(s string, w int) string {
	if w == 0 {
		return ""
	}
	return fit(s, w) + " "
}

type treeCols struct{ agent, branch, port, state, ahead, path int }

// treeColumns sizes the worktrees table for width w and the worktrees
// shown: agent and branch first, the path takes what is left.
func (m *Model) treeColumns(w int, rows []workers.WorktreeState, shown []int) treeCols {
	agent, branch := len("agent"), len("branch")
	for _, j := range shown {
		agent, branch = max(agent, cellWidth(rows[j].AgentID)), max(branch, cellWidth(treeBranch(&rows[j])))
	}
	c := treeCols{state: 8, ahead: 9}
	room := w - lead + 1 - (c.state + 1) - (c.ahead + 1)
	room = allot(room, colWant{&c.agent, agent, 8, 24}, colWant{&c.branch, branch, 10, 48})
	if w >= 100 {
		room = allot(room, colWant{&c.port, 5, 5, 5})
	}
	c.path = max(0, room-1)
	return c
}

func treeBranch(s *workers.WorktreeState) string {
	if s.Head != "" {
		return s.Head
	}
	return s.Branch
}

func (c treeCols) header() string {
	return strings.Repeat(" ", lead) + fit("agent", c.agent) + " " + fit("branch", c.branch) + " " + cell("port", c.port) +
		fit("state", c.state) + " " + fit("vs integ", c.ahead) + " " + fit("path", c.path)
}

func (m *Model) treeLine(s *workers.WorktreeState, c treeCols, selected bool) string {
	plain := m.plain
	var b strings.Builder
	b.WriteString(gutter(selected))
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
			mark = m.st.Warn.Render(mark)
		} else {
			mark = m.st.Good.Render(mark)
		}
	}
	b.WriteString(mark + " ")
	branch := treeBranch(s)
	port := "-"
	if s.Port > 0 {
		port = itoa(s.Port)
	}
	b.WriteString(fit(termtext.Line(s.AgentID), c.agent) + " " + fit(termtext.Line(branch), c.branch) + " " + cell(port, c.port) + fit(state, c.state) + " ")
	ahead := ""
	if s.Exists && s.Err == "" {
		ahead = "↑" + itoa(s.Ahead) + " ↓" + itoa(s.Behind)
	}
	b.WriteString(fit(ahead, c.ahead) + " ")
	path := s.Path
	if rel, ok := strings.CutPrefix(path, m.opt.Tree.Project+"/"); ok {
		path = rel
	}
	if s.Err != "" {
		path = s.Err
	}
	b.WriteString(fit(termtext.Line(path), c.path))
	return m.finish(b.String(), selected)
}

type eventCols struct{ age, event, slug, move, agent, reason int }

// eventColumns sizes the events table for width w and the rows shown:
// event, plan and agent as wide as their widest, the move when wide; the
// reason takes what is left.
func eventColumns(w int, rows []eventRow) eventCols {
	event, slug, move, agent := len("event"), len("plan"), len("move"), len("agent")
	for _, r := range rows {
		if e := r.event; e != nil {
			event, slug = max(event, cellWidth(e.Event)), max(slug, cellWidth(e.Slug))
			move, agent = max(move, cellWidth(moveText(e))), max(agent, cellWidth(e.AgentID))
		}
	}
	// Seven cells hold any age coarse gives under a thousand days.
	c := eventCols{age: 7}
	room := w - eventLead + 1 - (c.age + 1)
	room = allot(room, colWant{&c.event, event, 7, 20}, colWant{&c.slug, slug, 10, 32}, colWant{&c.agent, agent, 8, 20})
	if w >= 100 {
		room = allot(room, colWant{&c.move, move, 10, 40})
	}
	c.reason = max(0, room-1)
	return c
}

// eventLead is the cursor gutter: an event row has no mark (a warning's ⚠
// stands where the age begins).
const eventLead = 2

// moveText is where an event took a plan: "bugs → in-progress".
func moveText(e *planfs.Event) string {
	switch {
	case e.From == e.To:
		return laneOf(e.To)
	case e.From == "":
		return "→ " + laneOf(e.To)
	}
	return laneOf(e.From) + " → " + laneOf(e.To)
}

func (c eventCols) header() string {
	h := strings.Repeat(" ", eventLead) + fit("ago", c.age) + " " + fit("event", c.event) + " " + fit("plan", c.slug) + " "
	if c.move > 0 {
		h += fit("move", c.move) + " "
	}
	return h + fit("agent", c.agent) + " " + fit("reason", c.reason)
}

func (m *Model) eventLine(e *planfs.Event, c eventCols, selected bool) string {
	var b strings.Builder
	b.WriteString(gutter(selected))
	when := "?"
	if ts, err := time.Parse(time.RFC3339Nano, e.TS); err == nil {
		when = coarse(m.now - float64(ts.UnixNano())/1e9)
	}
	b.WriteString(fit(when, c.age) + " " + fit(termtext.Line(e.Event), c.event) + " " + fit(termtext.Line(e.Slug), c.slug) + " ")
	if c.move > 0 {
		b.WriteString(fit(termtext.Line(moveText(e)), c.move) + " ")
	}
	b.WriteString(fit(termtext.Line(e.AgentID), c.agent) + " " + fit(termtext.Line(e.Reason), c.reason))
	return m.finish(b.String(), selected)
}

func gutter(selected bool) string {
	if selected {
		return "▸ "
	}
	return "  "
}

// finish highlights a selected row across the whole table width.
func (m *Model) finish(line string, selected bool) string {
	if !selected {
		return line
	}
	return m.highlight(fit(line, m.tableWidth()))
}

// highlight marks a selected line without hiding the colours inside it:
// a background renewed after every reset inside; with no colour at all
// (NO_COLOR, the Ascii profile drops every style) reverse video, written
// directly, so the selection is more than the ▸ in its gutter.
func (m *Model) highlight(line string) string {
	if m.plain || m.rowOn == "" {
		return reverseOn + line + reverseOff
	}
	return m.rowOn + strings.ReplaceAll(line, "\x1b[0m", "\x1b[0m"+m.rowOn) + "\x1b[0m"
}

// The escape codes of reverse video, on and off.
const reverseOn, reverseOff = "\x1b[7m", "\x1b[27m"
