package workers

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// PublishedDetail is a worker another machine publishes: its record as
// read, judged on this machine's clock, and where its log is.
func PublishedDetail(cm *uictx.Common, p look.Published, seenAt time.Time, log []string, logErr error) []string {
	d := &uictx.DetailText{C: cm}
	now := float64(cm.Opt.Tree.Now().UnixNano()) / 1e9
	d.Heading("Published record")
	if p.Problem != "" {
		d.Field("unreadable", p.Problem)
	}
	exit := "(none)"
	if p.ExitCode != nil {
		exit = kit.Itoa(*p.ExitCode)
	}
	for _, kv := range [][2]string{{"agent_id", p.AgentID}, {"host", p.Host}, {"tier", p.Tier}, {"model", p.Model},
		{"endpoint", p.Endpoint}, {"plan", p.Plan}, {"state", p.State.State + " (" + string(p.Health) + " on this machine's clock)"},
		{"unchanged for", kit.Coarse(now - kit.UnixOf(seenAt))}, {"exit_code", exit}, {"spent", p.Spent.String()}, {"paused", p.Paused}, {"pid", kit.Itoa(p.PID)}} {
		d.Field(kv[0], kv[1])
	}
	d.Heading("Note")
	d.Note(cmp.Or(p.Note, "(none)"))
	d.Heading("Log · on " + p.Host)
	d.Field("last line", cmp.Or(p.LastLine, "(none)"))
	d.Field("where", p.Host+":"+cmp.Or(p.LogPath, "(not said)"))
	switch {
	case p.Serve == "":
		d.Note(p.Host + " runs no fleetwatch serve: read the log there")
	case logErr != nil:
		d.Note(p.Host + "'s fleetwatch serve: " + logErr.Error())
	default:
		d.Heading("Log · last " + kit.Itoa(len(log)) + " lines · from " + p.Host + "'s fleetwatch serve at " + p.Serve)
		for _, l := range log {
			d.Lines = append(d.Lines, "  "+uictx.LogLine(cm, l))
		}
	}
	return d.Lines
}

// stateKeys are the state file's fields this version knows, in its order.
var stateKeys = []string{"pid", "agent_id", "tier", "model", "plan", "worktree", "port", "started",
	"last_heartbeat", "state", "exit_code", "host", "heartbeat_every", "endpoint", "note", "contained"}

// scopeKeys are the scope scanner's fields, shown under their own heading.
var scopeKeys = []string{"mode", "scope", "touched", "touched_more", "violations"}

// spendKeys are the run's spend and pause, shown under their own heading.
var spendKeys = []string{"spent", "paused", "paused_at", "pausable"}

func Detail(cm *uictx.Common, w look.WorkerDetail, overlaps []look.Overlap) []string {
	d := &uictx.DetailText{C: cm}
	d.Heading("State file")
	d.Field("file", cm.ProjectRel(w.StateFile))
	switch {
	case w.StateMissing:
		d.Note("no state file: the worker has not written one yet, or it was removed")
	case w.StateErr != "":
		d.Field("unreadable", cm.ProjectRel(w.StateErr))
	}
	if w.Raw != nil && w.StateErr == "" {
		detailStateFields(d, &w.State)
		d.ExtraFields(w.Raw, slices.Concat(stateKeys, scopeKeys, spendKeys, []string{"asking"})...)
	}
	d.Heading("Note")
	if w.State.Note == "" {
		d.Note("(none)")
	} else {
		d.Block(w.State.Note)
	}
	detailAsking(d, &w.State)
	detailScope(d, &w.State, overlaps)
	detailSpend(d, &w.State)
	if w.Raw != nil {
		d.Heading("On disk")
		d.RawJSON(w.Raw)
	}
	d.Heading("Log · last " + kit.Itoa(look.DetailLogLines) + " lines · " + cm.ProjectRel(w.LogFile))
	switch {
	case w.LogErr != "":
		d.Note(cm.ProjectRel(w.LogErr))
	case w.LogMissing:
		d.Note("no log yet")
	case len(w.Log) == 0:
		d.Note("(empty)")
	}
	for _, l := range w.Log {
		d.Lines = append(d.Lines, "  "+uictx.LogLine(cm, l))
	}
	return d.Lines
}

// scope lists what the scope scanner saw of the worker's change and
// the radar's overlaps with the other running workers.
// A worker the scanner never looked at has no such section.
func detailScope(d *uictx.DetailText, st *look.State, overlaps []look.Overlap) {
	if st.Mode == "" && st.Scope == "" && len(st.Touched) == 0 && len(st.Violations) == 0 && len(overlaps) == 0 {
		return
	}
	d.Heading("Scope")
	d.Field("mode", st.Mode)
	d.Field("scope", st.Scope)
	if len(st.Violations) == 0 {
		d.Note("no path out of scope")
	} else {
		d.Note(kit.Plural(len(st.Violations), "path", "paths") + " out of scope:")
		for _, p := range st.Violations {
			d.Note("  ⚠ " + p)
		}
	}
	touched := kit.Plural(len(st.Touched), "path", "paths") + " touched"
	if st.TouchedMore > 0 {
		touched += " (and " + kit.Itoa(st.TouchedMore) + " more not listed)"
	}
	d.Note(touched + ":")
	for _, p := range st.Touched {
		d.Note("  " + p)
	}
	for _, o := range overlaps {
		d.Note(overlapWords(o, st.AgentID))
		if len(o.Conflicts) > 0 {
			d.Note("  conflicts in " + strings.Join(o.Conflicts, ", "))
		}
		if o.Note != "" {
			d.Note("  " + o.Note)
		}
	}
}

// spend is what the run has spent so far and why it is paused; a worker
// whose driver says neither has no such section.
func detailSpend(d *uictx.DetailText, st *look.State) {
	if st.Spent == (ledger.Totals{}) && st.Paused == "" && !st.Pausable {
		return
	}
	d.Heading("Spend")
	d.Field("spent", st.Spent.String())
	if st.Paused != "" {
		d.Field("paused", st.Paused)
		if !st.PausedAt.IsZero() {
			now := d.C.Opt.Tree.Now()
			d.Field("paused_at", uictx.Stamp(float64(st.PausedAt.UnixNano())/1e9, float64(now.UnixNano())/1e9))
		}
	}
	if st.Pausable {
		d.Note("its driver pauses and resumes the run: p in the workers pane, or the inbox (7)")
	}
}

func detailStateFields(d *uictx.DetailText, st *look.State) {
	now := d.C.Opt.Tree.Now()
	when := func(s look.Stamp) string {
		if s.IsZero() {
			return "(none)"
		}
		return uictx.Stamp(float64(s.UnixNano())/1e9, float64(now.UnixNano())/1e9)
	}
	exit := "(none)"
	if st.ExitCode != nil {
		exit = kit.Itoa(*st.ExitCode)
	}
	vals := []string{kit.Itoa(st.PID), st.AgentID, st.Tier, st.Model, st.Plan, st.Worktree, kit.Itoa(st.Port),
		when(st.Started), when(st.LastHeartbeat), st.State + " (" + string(st.Health(now)) + " now)", exit, st.Host,
		strconv.FormatFloat(st.HeartbeatEvery, 'f', -1, 64) + " s", st.Endpoint, st.Note, cmp.Or(st.Contained, "(not said)")}
	for i, k := range stateKeys {
		if k == "worktree" {
			vals[i] = d.C.ProjectRel(vals[i])
		}
		d.Field(k, vals[i])
	}
}
