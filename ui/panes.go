package ui

import (
	"strings"
	"time"

	"fleetwatch/internal/termtext"
	"fleetwatch/planfs"
)

// cell is s fitted to w and a space, or nothing for a hidden column (w 0).
func cell(s string, w int) string {
	if w == 0 {
		return ""
	}
	return fit(s, w) + " "
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
