package ui

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// eventList is the Events pane: scan warnings, then the event log newest
// first.
type eventList struct {
	table
	paneFilter
	rows []eventRow
	cols eventCols
}

// eventRow is a line of the Events pane: a scan warning or an event.
type eventRow struct {
	warn  *model.Warning
	event *planfs.Event
}

func (e *eventList) rebuild(pc *paneCtx) {
	d := pc.d
	if d == nil {
		return
	}
	e.rows = e.rows[:0]
	if d.eventsErr != nil {
		// The project is known: the reason needs the room.
		why := strings.ReplaceAll(d.eventsErr.Error(), pc.opt.Tree.Project+string(filepath.Separator), "")
		e.rows = append(e.rows, eventRow{warn: &model.Warning{File: planfs.EventsFile, Message: "cannot read the event log: " + why}})
	}
	for i := range d.board.Warnings {
		e.rows = append(e.rows, eventRow{warn: &d.board.Warnings[i]})
	}
	for _, p := range pc.stateProblems {
		e.rows = append(e.rows, eventRow{warn: &model.Warning{File: "worker state", Message: "unreadable: " + p}})
	}
	for i := range d.events {
		e.rows = append(e.rows, eventRow{event: &d.events[i]})
	}
	if f := e.needle(); f != "" {
		e.rows = slices.DeleteFunc(e.rows, func(r eventRow) bool { return !r.matches(f) })
	}
	keys := make([]string, len(e.rows))
	for i, r := range e.rows {
		if r.warn != nil {
			keys[i] = "w\x00" + r.warn.File + "\x00" + r.warn.Message
		} else {
			keys[i] = r.event.TS + "\x00" + r.event.Event + "\x00" + r.event.Slug
		}
	}
	e.cols = eventColumns(e.width, e.rows)
	c := e.cols
	cm := pc.common
	e.set(keys, func(i int, sel bool) string {
		if w := e.rows[i].warn; w != nil {
			return warningLine(cm, w, sel)
		}
		return eventLine(cm, e.rows[i].event, c, sel)
	})
}

func (e *eventList) selected() selection { return selection{} }

func (e *eventList) syncKeys(pc *paneCtx, set setKey) {
	set(&pc.keys.Events.Open, pc.shown == eventsPane && e.cursor < len(e.rows), "open: select an event in the events pane (5)")
}

func (e *eventList) update(pc *paneCtx, msg tea.KeyMsg) (tea.Msg, bool) {
	if key.Matches(msg, pc.keys.Events.Open) {
		return e.open(), true
	}
	return nil, false
}

func (e *eventList) view(pc *paneCtx, h int) []string {
	return pc.tableBox(pc.filterTitle("Events", &e.paneFilter), e.cols.header(), &e.table, h, pc.emptyText(&e.paneFilter, "no events yet in .plans/logs/events.jsonl"))
}

// EventKeys are the Events pane's.
type EventKeys struct{ Open key.Binding }

func (r eventRow) matches(f string) bool {
	if w := r.warn; w != nil {
		return anyContains(f, w.File, w.Message)
	}
	e := r.event
	return anyContains(f, e.Event, e.Slug, e.From, e.To, e.AgentID, e.Reason)
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
	h := strings.Repeat(" ", eventLead) + Fit("ago", c.age) + " " + Fit("event", c.event) + " " + Fit("plan", c.slug) + " "
	if c.move > 0 {
		h += Fit("move", c.move) + " "
	}
	return h + Fit("agent", c.agent) + " " + Fit("reason", c.reason)
}

// eventLine is an event's row, not yet highlighted (finish, table.go).
func eventLine(cm *common, e *planfs.Event, c eventCols, selected bool) string {
	var b strings.Builder
	b.WriteString(gutter(selected))
	when := "?"
	if ts, err := time.Parse(time.RFC3339Nano, e.TS); err == nil {
		when = coarse(cm.now - float64(ts.UnixNano())/1e9)
	}
	b.WriteString(Fit(when, c.age) + " " + Fit(termtext.Line(e.Event), c.event) + " " + Fit(termtext.Line(e.Slug), c.slug) + " ")
	if c.move > 0 {
		b.WriteString(Fit(termtext.Line(moveText(e)), c.move) + " ")
	}
	b.WriteString(Fit(termtext.Line(e.AgentID), c.agent) + " " + Fit(termtext.Line(e.Reason), c.reason))
	return b.String()
}

// warningLine is a scan warning's row, not yet highlighted.
func warningLine(cm *common, w *model.Warning, selected bool) string {
	text := "⚠ " + termtext.Line(w.File)
	if w.Line > 0 {
		text += ":" + itoa(w.Line)
	}
	text += ": " + termtext.Line(w.Message)
	if !selected && !cm.plain {
		text = cm.st.Warn.Render(text)
	}
	return gutter(selected) + text
}

// open shows the selected line whole; it is in memory already.
func (e *eventList) open() tea.Msg {
	if e.cursor >= len(e.rows) {
		return nil
	}
	r := e.rows[e.cursor]
	if r.warn != nil {
		w := *r.warn
		return detailReq{"warn:" + w.File, "warning · " + w.File, func() func(*paneCtx) []string {
			return func(pc *paneCtx) []string { return warningDetail(pc.common, w) }
		}}
	}
	ev := *r.event
	return detailReq{"event:" + ev.TS + ev.Event + ev.Slug, "event · " + ev.Event + " · " + ev.Slug, func() func(*paneCtx) []string {
		return func(pc *paneCtx) []string { return eventDetail(pc.common, ev) }
	}}
}

func eventDetail(cm *common, e planfs.Event) []string {
	d := &detailText{c: cm}
	d.heading("Event")
	ts := e.TS
	if at, err := time.Parse(time.RFC3339Nano, e.TS); err == nil {
		ts += " · " + at.Local().Format("2006-01-02 15:04:05 MST") + " · " + span(cm.opt.Tree.Now().Sub(at).Seconds()) + " ago"
	}
	d.field("ts", ts)
	d.field("event", e.Event)
	d.field("slug", e.Slug)
	d.field("from", e.From)
	d.field("to", e.To)
	d.field("agent_id", e.AgentID)
	d.field("origin", e.Origin)
	d.field("lease", e.Lease)
	d.field("forced", strconv.FormatBool(e.Forced))
	d.heading("Reason")
	if e.Reason == "" {
		d.note("(none)")
	} else {
		d.block(e.Reason)
	}
	return d.lines
}

func warningDetail(cm *common, w model.Warning) []string {
	d := &detailText{c: cm}
	d.heading("Warning")
	d.field("file", w.File)
	if w.Line > 0 {
		d.field("line", itoa(w.Line))
	}
	d.heading("Message")
	d.block(w.Message)
	return d.lines
}
