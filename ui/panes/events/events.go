// Package events is the cockpit's Events pane: the scan's warnings, the
// workers' unreadable state files and the event log newest first, each
// opened whole with enter.
package events

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
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// Pane is the Events pane: scan warnings, then the event log newest
// first.
type Pane struct {
	kit.Table
	kit.Filter
	id   uictx.PaneID // its place in the tab order
	rows []eventRow
	cols eventCols
}

// eventRow is a line of the Events pane: a scan warning or an event.
type eventRow struct {
	warn  *model.Warning
	event *planfs.Event
}

func (e *Pane) Rebuild(pc *uictx.Ctx) {
	d := pc.D
	if d == nil {
		return
	}
	e.rows = e.rows[:0]
	if d.EventsErr != nil {
		// The project is known: the reason needs the room.
		why := strings.ReplaceAll(d.EventsErr.Error(), pc.Opt.Tree.Project+string(filepath.Separator), "")
		e.rows = append(e.rows, eventRow{warn: &model.Warning{File: planfs.EventsFile, Message: "cannot read the event log: " + why}})
	}
	for i := range d.Board.Warnings {
		e.rows = append(e.rows, eventRow{warn: &d.Board.Warnings[i]})
	}
	for _, p := range pc.StateProblems {
		e.rows = append(e.rows, eventRow{warn: &model.Warning{File: "worker state", Message: "unreadable: " + p}})
	}
	for i := range d.Events {
		e.rows = append(e.rows, eventRow{event: &d.Events[i]})
	}
	if f := e.Needle(); f != "" {
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
	e.cols = eventColumns(e.Width, e.rows)
	c := e.cols
	cm := pc.Common
	e.Set(keys, func(i int, sel bool) string {
		if w := e.rows[i].warn; w != nil {
			return warningLine(cm, w, sel)
		}
		return eventLine(cm, e.rows[i].event, c, sel)
	})
}

// New is the Events pane at id in the tab order.
func New(id uictx.PaneID) uictx.Pane { return &Pane{id: id} }

func (e *Pane) Selected() uictx.Selection { return uictx.Selection{} }

// EventAt is row i's event, nil for a scan warning or past the rows.
func (e *Pane) EventAt(i int) *planfs.Event {
	if i < 0 || i >= len(e.rows) {
		return nil
	}
	return e.rows[i].event
}

func (e *Pane) SyncKeys(pc *uictx.Ctx, set uictx.SetKey) {
	set(&pc.Keys.Events.Open, pc.Shown == e.id && e.Cursor < len(e.rows), "open: select an event in the events pane (5)")
}

func (e *Pane) Update(pc *uictx.Ctx, msg tea.KeyMsg) (tea.Msg, bool) {
	if key.Matches(msg, pc.Keys.Events.Open) {
		return e.open(), true
	}
	return nil, false
}

func (e *Pane) View(pc *uictx.Ctx, h int) []string {
	return pc.TableBox(kit.FilterTitle("Events", &e.Filter), e.cols.header(), &e.Table, h, kit.EmptyText(&e.Filter, "no events yet in .plans/logs/events.jsonl"))
}

func (r eventRow) matches(f string) bool {
	if w := r.warn; w != nil {
		return kit.AnyContains(f, w.File, w.Message)
	}
	e := r.event
	return kit.AnyContains(f, e.Event, e.Slug, e.From, e.To, e.AgentID, e.Reason)
}

type eventCols struct{ age, event, slug, move, agent, reason int }

// eventColumns sizes the events table for width w and the rows shown:
// event, plan and agent as wide as their widest, the move when wide; the
// reason takes what is left.
func eventColumns(w int, rows []eventRow) eventCols {
	event, slug, move, agent := len("event"), len("plan"), len("move"), len("agent")
	for _, r := range rows {
		if e := r.event; e != nil {
			event, slug = max(event, kit.CellWidth(e.Event)), max(slug, kit.CellWidth(e.Slug))
			move, agent = max(move, kit.CellWidth(MoveText(e))), max(agent, kit.CellWidth(e.AgentID))
		}
	}
	// Seven cells hold any age coarse gives under a thousand days.
	c := eventCols{age: 7}
	room := w - eventLead + 1 - (c.age + 1)
	room = kit.Allot(room, kit.Col(&c.event, event, 7, 20), kit.Col(&c.slug, slug, 10, 32), kit.Col(&c.agent, agent, 8, 20))
	if w >= 100 {
		room = kit.Allot(room, kit.Col(&c.move, move, 10, 40))
	}
	c.reason = max(0, room-1)
	return c
}

// eventLead is the cursor gutter: an event row has no mark (a warning's ⚠
// stands where the age begins).
const eventLead = 2

// MoveText is where an event took a plan: "bugs → in-progress".
func MoveText(e *planfs.Event) string {
	switch {
	case e.From == e.To:
		return kit.LaneOf(e.To)
	case e.From == "":
		return "→ " + kit.LaneOf(e.To)
	}
	return kit.LaneOf(e.From) + " → " + kit.LaneOf(e.To)
}

func (c eventCols) header() string {
	h := strings.Repeat(" ", eventLead) + kit.Fit("ago", c.age) + " " + kit.Fit("event", c.event) + " " + kit.Fit("plan", c.slug) + " "
	if c.move > 0 {
		h += kit.Fit("move", c.move) + " "
	}
	return h + kit.Fit("agent", c.agent) + " " + kit.Fit("reason", c.reason)
}

// eventLine is an event's row, not yet highlighted (kit.Table highlights the selected one).
func eventLine(cm *uictx.Common, e *planfs.Event, c eventCols, selected bool) string {
	var b strings.Builder
	b.WriteString(kit.Gutter(selected))
	when := "?"
	if ts, err := time.Parse(time.RFC3339Nano, e.TS); err == nil {
		when = kit.Coarse(cm.Now - float64(ts.UnixNano())/1e9)
	}
	b.WriteString(kit.Fit(when, c.age) + " " + kit.Fit(termtext.Line(e.Event), c.event) + " " + kit.Fit(termtext.Line(e.Slug), c.slug) + " ")
	if c.move > 0 {
		b.WriteString(kit.Fit(termtext.Line(MoveText(e)), c.move) + " ")
	}
	b.WriteString(kit.Fit(termtext.Line(e.AgentID), c.agent) + " " + kit.Fit(termtext.Line(e.Reason), c.reason))
	return b.String()
}

// warningLine is a scan warning's row, not yet highlighted.
func warningLine(cm *uictx.Common, w *model.Warning, selected bool) string {
	text := "⚠ " + termtext.Line(w.File)
	if w.Line > 0 {
		text += ":" + kit.Itoa(w.Line)
	}
	text += ": " + termtext.Line(w.Message)
	if !selected && !cm.Plain {
		text = cm.St.Warn.Render(text)
	}
	return kit.Gutter(selected) + text
}

// open shows the selected line whole; it is in memory already.
func (e *Pane) open() tea.Msg {
	if e.Cursor >= len(e.rows) {
		return nil
	}
	r := e.rows[e.Cursor]
	if r.warn != nil {
		w := *r.warn
		return uictx.Detail("warn:"+w.File, "warning · "+w.File, func() func(*uictx.Ctx) []string {
			return func(pc *uictx.Ctx) []string { return warningDetail(pc.Common, w) }
		})
	}
	ev := *r.event
	return uictx.Detail("event:"+ev.TS+ev.Event+ev.Slug, "event · "+ev.Event+" · "+ev.Slug, func() func(*uictx.Ctx) []string {
		return func(pc *uictx.Ctx) []string { return eventDetail(pc.Common, ev) }
	})
}

func eventDetail(cm *uictx.Common, e planfs.Event) []string {
	d := &uictx.DetailText{C: cm}
	d.Heading("Event")
	ts := e.TS
	if at, err := time.Parse(time.RFC3339Nano, e.TS); err == nil {
		ts += " · " + at.Local().Format("2006-01-02 15:04:05 MST") + " · " + kit.Span(cm.Opt.Tree.Now().Sub(at).Seconds()) + " ago"
	}
	d.Field("ts", ts)
	d.Field("event", e.Event)
	d.Field("slug", e.Slug)
	d.Field("from", e.From)
	d.Field("to", e.To)
	d.Field("agent_id", e.AgentID)
	d.Field("origin", e.Origin)
	d.Field("lease", e.Lease)
	d.Field("forced", strconv.FormatBool(e.Forced))
	d.Heading("Reason")
	if e.Reason == "" {
		d.Note("(none)")
	} else {
		d.Block(e.Reason)
	}
	return d.Lines
}

func warningDetail(cm *uictx.Common, w model.Warning) []string {
	d := &uictx.DetailText{C: cm}
	d.Heading("Warning")
	d.Field("file", w.File)
	if w.Line > 0 {
		d.Field("line", kit.Itoa(w.Line))
	}
	d.Heading("Message")
	d.Block(w.Message)
	return d.Lines
}
