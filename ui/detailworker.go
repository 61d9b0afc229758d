package ui

import (
	"cmp"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/workers"
)

// stateKeys are the state file's fields this version knows, in its order.
var stateKeys = []string{"pid", "agent_id", "tier", "model", "plan", "worktree", "port", "started",
	"last_heartbeat", "state", "exit_code", "host", "heartbeat_every", "endpoint", "note", "contained"}

// scopeKeys are the scope scanner's fields, shown under their own heading.
var scopeKeys = []string{"mode", "scope", "touched", "touched_more", "violations"}

// openWorker shows the selected worker: its state file, its note and the
// end of its log.
func (m *Model) openWorker() tea.Cmd {
	r := m.selectedWorker()
	if r == nil {
		return nil
	}
	agent, project := r.st.AgentID, m.opt.Tree.Project
	return m.openDetail("worker:"+agent, "worker · "+agent, func() func(*Model) []string {
		w := workers.ReadWorkerDetail(project, agent)
		return func(m *Model) []string { return workerDetail(m, w) }
	})
}

func workerDetail(m *Model, w workers.WorkerDetail) []string {
	d := &detailText{m: m}
	d.heading("State file")
	d.field("file", m.projectRel(w.StateFile))
	switch {
	case w.StateMissing:
		d.note("no state file: the worker has not written one yet, or it was removed")
	case w.StateErr != "":
		d.field("unreadable", m.projectRel(w.StateErr))
	}
	if w.Raw != nil && w.StateErr == "" {
		d.stateFields(&w.State)
		d.extraFields(w.Raw, append(stateKeys, scopeKeys...)...)
	}
	d.heading("Note")
	if w.State.Note == "" {
		d.note("(none)")
	} else {
		d.block(w.State.Note)
	}
	m.scopeDetail(d, &w.State)
	if w.Raw != nil {
		d.heading("On disk")
		d.rawJSON(w.Raw)
	}
	d.heading("Log · last " + itoa(workers.DetailLogLines) + " lines · " + m.projectRel(w.LogFile))
	switch {
	case w.LogErr != "":
		d.note(m.projectRel(w.LogErr))
	case w.LogMissing:
		d.note("no log yet")
	case len(w.Log) == 0:
		d.note("(empty)")
	}
	for _, l := range w.Log {
		d.lines = append(d.lines, "  "+m.logLine(l))
	}
	return d.lines
}

// scopeDetail lists what the scope scanner saw of the worker's change and
// the radar's overlaps with the other running workers.
// A worker the scanner never looked at has no such section.
func (m *Model) scopeDetail(d *detailText, st *workers.State) {
	overlaps := m.overlapsOf(st.AgentID)
	if st.Mode == "" && st.Scope == "" && len(st.Touched) == 0 && len(st.Violations) == 0 && len(overlaps) == 0 {
		return
	}
	d.heading("Scope")
	d.field("mode", st.Mode)
	d.field("scope", st.Scope)
	if len(st.Violations) == 0 {
		d.note("no path out of scope")
	} else {
		d.note(plural(len(st.Violations), "path", "paths") + " out of scope:")
		for _, p := range st.Violations {
			d.note("  ⚠ " + p)
		}
	}
	touched := plural(len(st.Touched), "path", "paths") + " touched"
	if st.TouchedMore > 0 {
		touched += " (and " + itoa(st.TouchedMore) + " more not listed)"
	}
	d.note(touched + ":")
	for _, p := range st.Touched {
		d.note("  " + p)
	}
	for _, o := range overlaps {
		d.note(overlapWords(o, st.AgentID))
		if len(o.Conflicts) > 0 {
			d.note("  conflicts in " + strings.Join(o.Conflicts, ", "))
		}
		if o.Note != "" {
			d.note("  " + o.Note)
		}
	}
}

func (d *detailText) stateFields(st *workers.State) {
	now := d.m.opt.Tree.Now()
	when := func(s workers.Stamp) string {
		if s.IsZero() {
			return "(none)"
		}
		return stamp(float64(s.UnixNano())/1e9, float64(now.UnixNano())/1e9)
	}
	exit := "(none)"
	if st.ExitCode != nil {
		exit = itoa(*st.ExitCode)
	}
	vals := []string{itoa(st.PID), st.AgentID, st.Tier, st.Model, st.Plan, st.Worktree, itoa(st.Port),
		when(st.Started), when(st.LastHeartbeat), st.State + " (" + string(st.Health(now)) + " now)", exit, st.Host,
		strconv.FormatFloat(st.HeartbeatEvery, 'f', -1, 64) + " s", st.Endpoint, st.Note, cmp.Or(st.Contained, "(not said)")}
	for i, k := range stateKeys {
		if k == "worktree" {
			vals[i] = d.m.projectRel(vals[i])
		}
		d.field(k, vals[i])
	}
}

// openEvent shows the selected line of the Events pane whole; it is in
// memory already.
func (m *Model) openEvent() tea.Cmd {
	e := &m.events
	if e.cursor >= len(e.rows) {
		return nil
	}
	r := e.rows[e.cursor]
	if r.warn != nil {
		w := *r.warn
		return m.openDetail("warn:"+w.File, "warning · "+w.File, func() func(*Model) []string {
			return func(m *Model) []string { return warningDetail(m, w) }
		})
	}
	ev := *r.event
	return m.openDetail("event:"+ev.TS+ev.Event+ev.Slug, "event · "+ev.Event+" · "+ev.Slug, func() func(*Model) []string {
		return func(m *Model) []string { return eventDetail(m, ev) }
	})
}

func eventDetail(m *Model, e planfs.Event) []string {
	d := &detailText{m: m}
	d.heading("Event")
	ts := e.TS
	if at, err := time.Parse(time.RFC3339Nano, e.TS); err == nil {
		ts += " · " + at.Local().Format("2006-01-02 15:04:05 MST") + " · " + span(m.opt.Tree.Now().Sub(at).Seconds()) + " ago"
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

func warningDetail(m *Model, w model.Warning) []string {
	d := &detailText{m: m}
	d.heading("Warning")
	d.field("file", w.File)
	if w.Line > 0 {
		d.field("line", itoa(w.Line))
	}
	d.heading("Message")
	d.block(w.Message)
	return d.lines
}
