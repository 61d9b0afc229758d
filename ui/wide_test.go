package ui

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/mergekeys"
	"github.com/fleetwatch/fleetwatch/ui/panes/events"
	"github.com/fleetwatch/fleetwatch/ui/panes/inbox"
	"github.com/fleetwatch/fleetwatch/ui/panes/merge"
	"github.com/fleetwatch/fleetwatch/ui/panes/plans"
	"github.com/fleetwatch/fleetwatch/ui/panes/workers"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// lineWith is the line of v that holds key, "" when none does.
func lineWith(v, key string) string {
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, key) {
			return l
		}
	}
	return ""
}

// On the demo at 160 columns, in every pane, each row holds all its
// cells whole on its own line (the Plans preview below the table must not
// stand in for a cut reason); only a plan's title may be cut. A worker
// back from a run (the driver's long note) and the footer beside a status
// are whole too.
func TestDemoAt160RowsWhole(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	// What a worker spawned from the demo leaves once its run is done.
	exit0 := 0
	st := look.State{PID: 4242, AgentID: "ui-mid-1", Tier: "mid", Plan: "review-needed/duplicate-tags-by-case.md",
		Worktree: filepath.Join(p.dir, "var", "worktrees", "ui-mid-1"), State: look.StateExited, ExitCode: &exit0,
		Started: look.Stamp{Time: demoNow.Add(-time.Minute)}, LastHeartbeat: look.Stamp{Time: demoNow},
		HeartbeatEvery: 1200, Note: "agent exited 0; review-needed/duplicate-tags-by-case.md waits for review"}
	if err := look.WriteState(p.dir, st); err != nil {
		t.Fatal(err)
	}
	// The demo's UI spawns: s is among the footer's keys.
	opt := p.options()
	opt.Self = "/usr/local/bin/fleetwatch"
	h := newHarnessWith(t, p, opt, 160, 48)
	var cut []string
	row := func(v, key string, cells ...string) {
		l := lineWith(v, key)
		for _, c := range cells {
			if c != "" && !strings.Contains(l, c) {
				cut = append(cut, c+" (in the row of "+key+")")
			}
		}
	}
	for _, lane := range model.Lanes {
		for plansOf(&h.m).Lane() != lane {
			h.press("]")
		}
		v := h.view()
		for _, r := range plansOf(&h.m).Rows() {
			why, _ := plans.WhyText(h.m.d, r)
			who, _ := plans.WhoText(r, h.m.Now)
			row(v, " "+r.Plan.Slug+" ", why, who)
		}
	}
	h.press("2")
	v := h.view()
	for _, l := range leasesOf(&h.m).Rows() {
		row(v, l.Rel, l.AgentID, l.Origin)
	}
	h.press("4")
	v = h.view()
	for _, r := range h.m.wrk.rows {
		row(v, " "+r.St.AgentID+" ", workers.What(&r.St, workersOf(&h.m).Bare()), kit.PlanSlug(r.St.Plan), strings.TrimPrefix(r.St.Note, "on "))
	}
	h.press("5")
	v = h.view()
	// Event rows by place: a plan has many events.
	lines := strings.Split(v, "\n")
	head := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, " ago ") })
	ev := eventsOf(&h.m)
	for i := range min(ev.Len(), ev.Offset+ev.Height) - ev.Offset {
		if e := ev.EventAt(ev.Offset + i); e != nil {
			l := lines[head+1+i]
			row(l, l, e.Event, e.Slug, events.MoveText(e), e.AgentID, e.Reason)
		}
	}
	h.press("6")
	h.send(readMerge(p.dir))
	v = h.view()
	if len(h.m.merge.listing.Items) == 0 {
		t.Fatalf("the merge pane read no candidates:\n%s", v)
	}
	for _, s := range h.m.merge.listing.Items {
		row(v, " "+s.Slug+" ", string(s.State), mergekeys.WhyOf(h.m.Common, &s), merge.ReviewedCell(&s))
	}
	h.press("7")
	h.send(inboxCmd(p.tree, "notty", 80)())
	v = h.view()
	if len(inboxOf(&h.m).Entries()) == 0 {
		t.Fatalf("the inbox read no proposal:\n%s", v)
	}
	for _, e := range inboxOf(&h.m).Entries() {
		row(v, " "+e.Slug+" ", inbox.EntryState(&e), e.Problem)
	}
	// The status a spawn leaves, beside the keys: both whole.
	h.m.setStatus("✓ spawned ui-mid-2 (pid 16652, run, up to 1 plan); 4 shows it, l its log", false)
	h.press("4")
	if f := h.footer(); strings.Contains(f, "…") || !strings.Contains(f, "? all keys") || !strings.Contains(f, "q quit") {
		t.Errorf("the footer beside a status is cut: %q", f)
	}
	if len(cut) > 0 {
		t.Errorf("cut or missing at 160 columns: %q", cut)
	}
}

// A running worker's scope words and its note share the note column: the
// note is cut inside it, never the row at the table's edge (the words
// were padded to the whole column, and the note went past it).
func TestWorkerScopeWordsAndNoteShareTheColumn(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 160, 48)
	h.press("4")
	h.m.wrk.rows = []uictx.WorkerRow{{St: look.State{PID: 7, AgentID: "ui-mid-1", Tier: "mid", Plan: "in-progress/full-text-search.md",
		Scope: "no scope check", Note: "running demo-agent"}, Health: look.Live, Local: true}}
	h.m.wrk.Rebuild(h.m.ctx())
	l := lineWith(h.view(), " ui-mid-1 ")
	if !strings.Contains(l, "no scope check · running demo-agent ") || strings.Contains(l, "…") {
		t.Errorf("the worker's row: %q", l)
	}
}
