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

func leaseColumns(w int) leaseCols {
	c := leaseCols{owner: 14, claimed: 10, expires: 18}
	rest := w - lead - (c.owner + 1) - (c.claimed + 1) - c.expires
	if w >= 100 {
		c.origin = max(10, rest/3)
		rest -= c.origin + 1
	}
	c.plan = max(10, rest-1)
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
	plain := selected || m.plain
	var b strings.Builder
	b.WriteString(gutter(selected))
	mark, expires, bad := "●", "in "+span(l.ExpiresAt-m.now), false
	switch {
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
	b.WriteString(fit(plan, c.plan) + " " + fit(termtext.Line(l.AgentID), c.owner) + " ")
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

func treeColumns(w int) treeCols {
	c := treeCols{agent: 16, state: 8, ahead: 9}
	rest := w - lead - (c.agent + 1) - (c.state + 1) - (c.ahead + 1)
	if w >= 100 {
		c.port = 5 // narrower, the path needs the room more
		rest -= c.port + 1
	}
	c.branch = max(10, rest*2/5)
	c.path = max(0, rest-c.branch-1)
	return c
}

func (c treeCols) header() string {
	return strings.Repeat(" ", lead) + fit("agent", c.agent) + " " + fit("branch", c.branch) + " " + cell("port", c.port) +
		fit("state", c.state) + " " + fit("vs integ", c.ahead) + " " + fit("path", c.path)
}

func (m *Model) treeLine(s *workers.WorktreeState, c treeCols, selected bool) string {
	plain := selected || m.plain
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
	branch := s.Head
	if branch == "" {
		branch = s.Branch
	}
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

func eventColumns(w int) eventCols {
	c := eventCols{age: 8, event: 9, agent: 14}
	rest := w - lead - (c.age + 1) - (c.event + 1) - (c.agent + 1)
	c.slug = max(10, rest/3)
	rest -= c.slug + 1
	if w >= 100 {
		c.move = max(10, rest/2)
		rest -= c.move + 1
	}
	c.reason = max(0, rest)
	return c
}

func (c eventCols) header() string {
	h := strings.Repeat(" ", lead) + fit("ago", c.age) + " " + fit("event", c.event) + " " + fit("plan", c.slug) + " "
	if c.move > 0 {
		h += fit("move", c.move) + " "
	}
	return h + fit("agent", c.agent) + " " + fit("reason", c.reason)
}

func (m *Model) eventLine(e *planfs.Event, c eventCols, selected bool) string {
	var b strings.Builder
	b.WriteString(gutter(selected) + "  ")
	when := "?"
	if ts, err := time.Parse(time.RFC3339Nano, e.TS); err == nil {
		when = coarse(m.now - float64(ts.UnixNano())/1e9)
	}
	b.WriteString(fit(when, c.age) + " " + fit(termtext.Line(e.Event), c.event) + " " + fit(termtext.Line(e.Slug), c.slug) + " ")
	if c.move > 0 {
		move := laneOf(e.From) + " → " + laneOf(e.To)
		switch {
		case e.From == e.To:
			move = laneOf(e.To)
		case e.From == "":
			move = "→ " + laneOf(e.To)
		}
		b.WriteString(fit(termtext.Line(move), c.move) + " ")
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
	if selected && !m.plain {
		return m.st.Selected.Render(fit(line, m.tableWidth()))
	}
	return line
}
