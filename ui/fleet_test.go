package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/fleetwatch/fleetwatch/internal/spend"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// sampleBudgets are addSpend's budgets: the fleet's day at $20 (fleetDay
// sets it), an endpoint's and a tier's.
const sampleBudgets = "budgets:\n  fleet_day: {usd: %s}\n  endpoint_day: {claude: {usd: 10}}\n  tier_day: {frontier: {tokens: 2M}}\n"

// addSpend writes p's budgets (the fleet's day at fleetDay dollars) and a
// ledger of six runs over three days, four of them today (testNow's day:
// $11.20, 1.9M tokens), and the events of what their plans delivered:
// save-notes (mid) and csv-import (reasoner) landed, csv-import after a
// peer asked for more work and its first checks failed.
func (p *project) addSpend(t testing.TB, fleetDay string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(p.dir, "fleetwatch.yaml"), []byte(strings.Replace(sampleBudgets, "%s", fleetDay, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ago := func(d time.Duration) time.Time { return testNow.Add(-d) }
	h, day := time.Hour, 24*time.Hour
	for _, r := range []ledger.Run{
		{ID: "r1", Plan: "save-notes", Agent: "mid-1", Tier: "mid", Endpoint: "local", Input: 600_000, Output: 30_000, CostUSD: 0.90, Start: ago(3*day + 4*h), End: ago(3*day + 2*h)},
		{ID: "r2", Plan: "csv-import", Agent: "reasoner-1", Tier: "reasoner", Endpoint: "claude", Input: 1_200_000, Output: 60_000, CostUSD: 6.40, Start: ago(2 * day), End: ago(2*day - 5*h)},
		{ID: "r3", Plan: "export-pdf", Agent: "mid-1", Tier: "mid", Endpoint: "local", Input: 300_000, Output: 10_000, CostUSD: 0.45, Start: ago(2 * h), End: ago(h)},
		{ID: "r4", Plan: "csv-import", Agent: "reasoner-1", Tier: "reasoner", Endpoint: "claude", Input: 500_000, Output: 20_000, CostUSD: 2.60, Start: ago(3 * h), End: ago(2 * h)},
		{ID: "r5", Plan: "old-import", Agent: "small-2", Tier: "small", Endpoint: "local", Input: 100_000, Output: 5_000, CostUSD: 0.05, Start: ago(4 * h), End: ago(3 * h)},
		{ID: "r6", Plan: "search", Agent: "frontier-1", Tier: "frontier", Endpoint: "claude", Input: 900_000, Output: 50_000, CostUSD: 8.10, Start: ago(90 * time.Minute), End: ago(40 * time.Minute)},
	} {
		r.Priced, r.Source = true, "metered"
		if err := ledger.Append(p.dir, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range []struct {
		ago time.Duration
		ev  planfs.Event
	}{
		{3*day + h, planfs.Event{Event: "checks", Slug: "save-notes", Reason: "pass"}},
		{3 * day, planfs.Event{Event: "land", Slug: "save-notes"}},
		{2*day - 6*h, planfs.Event{Event: "review", Slug: "csv-import", Reason: "REVISE at abc"}},
		{2*day - 7*h, planfs.Event{Event: "needs-work", Slug: "csv-import"}},
		{2*day - 8*h, planfs.Event{Event: "checks", Slug: "csv-import", Reason: "fail: test"}},
		{90 * time.Minute, planfs.Event{Event: "checks", Slug: "csv-import", Reason: "pass"}},
		{time.Hour, planfs.Event{Event: "land", Slug: "csv-import"}},
	} {
		p.at(e.ago)
		p.tree.LogEvent(e.ev)
	}
	p.at(0)
}

// fleetHarness opens the UI on a project with addSpend's ledger and
// budgets, on the Fleet pane.
func fleetHarness(t *testing.T, fleetDay string, w, h int) *harness {
	t.Helper()
	p := newProject(t)
	p.addSpend(t, fleetDay)
	hs := newHarness(t, p, w, h)
	hs.press("8")
	if hs.m.pane != fleetPane {
		t.Fatalf("8 shows %s", paneSpecs[hs.m.pane].name)
	}
	return hs
}

func TestGoldenFleet(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			h := fleetHarness(t, "20", size[0], size[1])
			teatest.RequireEqualOutput(t, []byte(h.view()))
		})
	}
}

// The pane shows the day's spend against each budget, each tier's
// outcomes, and the header the day's spend.
func TestFleetPane(t *testing.T) {
	t.Parallel()
	h := fleetHarness(t, "20", 120, 36)
	v := h.view()
	header := strings.SplitN(v, "\n", 2)[0]
	if !strings.Contains(header, "$11.20 today") || strings.Contains(header, "claims stopped") {
		t.Errorf("header %q: want the day's spend and no stop", header)
	}
	for _, want := range []string{"fleet today", "56%", "1.9M tokens, $11.20 of $20", "endpoint claude today", "107%",
		"tier frontier today", "48%", "reasoner     2     1      1     $9.00     $9.00", "Cost per tier", "Landed per tier",
		"no run is running"} {
		if !strings.Contains(v, want) {
			t.Errorf("the pane lacks %q:\n%s", want, v)
		}
	}
	// enter: the selected tier's whole line of the report.
	h.press("j", "enter")
	v = h.view()
	for _, want := range []string{"Tier mid since 2025-05-26", "1st checks ok", "said done and the checks then failed"} {
		if !strings.Contains(v, want) {
			t.Errorf("the tier's detail lacks %q:\n%s", want, v)
		}
	}
}

// A spent fleet budget stops claims: the header says so, the pane says
// it whole.
func TestFleetStopInHeader(t *testing.T) {
	t.Parallel()
	h := fleetHarness(t, "10", 160, 48)
	v := h.view()
	if header := strings.SplitN(v, "\n", 2)[0]; !strings.Contains(header, "⚠ claims stopped: the fleet's daily budget ($10) is spent") {
		t.Errorf("header %q", header)
	}
	if !strings.Contains(v, "claims resume tomorrow or when budgets: in fleetwatch.yaml is raised") {
		t.Errorf("the pane does not say the stop whole:\n%s", v)
	}
}

// No budgets and no runs: the pane says what to do, the header says
// nothing of spend.
func TestFleetEmpty(t *testing.T) {
	t.Parallel()
	for _, w := range []int{80, 160} {
		p := newProject(t)
		h := newHarness(t, p, w, 30)
		h.press("8")
		v := h.view()
		for _, want := range []string{"no budgets: set budgets: in fleetwatch.yaml (fleetwatch help spend)", "no runs recorded yet"} {
			if !strings.Contains(v, want) {
				t.Errorf("%d wide: the pane lacks %q:\n%s", w, want, v)
			}
		}
		if strings.Contains(strings.SplitN(v, "\n", 2)[0], "today") {
			t.Errorf("%d wide: the header speaks of spend with none recorded", w)
		}
		if h.m.Keys.Fleet.Open.Enabled() {
			t.Errorf("enter is on with no tier")
		}
	}
}

// pausedWorkers writes the state files of running workers on this host,
// each this test process (alive, and never signalled: the engine refuses
// its own pid), and one elsewhere:
//
//	w-run     running export-pdf, spent 1.2M tokens, $3.40, pausable
//	w-budget  paused at its budget on search
//	w-hand    paused by the operator on old-import
//	w-old     running, its driver cannot pause
//	w-far     paused at its budget on build-7
func (p *project) pausedWorkers(t testing.TB) {
	t.Helper()
	host, _ := os.Hostname()
	me := os.Getpid()
	agent := &look.Proc{PID: me}
	at := func(ago time.Duration) look.Stamp { return look.Stamp{Time: testNow.Add(-ago)} }
	budget := "budget reached: run budget (2M tokens) spent: 2M tokens, $6.10 this run, 2M tokens, $6.10 on the plan"
	for i, st := range []look.State{
		{AgentID: "w-run", Plan: "in-progress/export-pdf.md", Host: host, Pausable: true, Agent: agent, Spent: ledger.Totals{Tokens: 1_200_000, USD: 3.40}},
		{AgentID: "w-budget", Plan: "in-progress/search.md", Host: host, Pausable: true, Agent: agent, Paused: budget, PausedAt: at(5 * time.Minute), Spent: ledger.Totals{Tokens: 2_000_000, USD: 6.10}},
		{AgentID: "w-hand", Plan: "in-progress/old-import.md", Host: host, Pausable: true, Agent: agent, Paused: "paused by the operator", PausedAt: at(time.Minute), Spent: ledger.Totals{Tokens: 40_000, USD: 0.02}},
		{AgentID: "w-old", Plan: "in-progress/crash-on-save.md", Host: host, Agent: agent},
		{AgentID: "w-far", Plan: "in-progress/ci-image.md", Host: "build-7", Pausable: true, Paused: budget, PausedAt: at(time.Hour), Spent: ledger.Totals{Tokens: 2_000_000, USD: 6.10}},
	} {
		st.PID, st.Tier, st.State, st.HeartbeatEvery = me, "mid", look.StateRunning, 30
		st.Started, st.LastHeartbeat = at(time.Duration(10-i)*time.Hour), at(10*time.Second)
		if err := look.WriteState(p.dir, st); err != nil {
			t.Fatal(err)
		}
	}
}

// pick moves the shown pane's cursor onto key and brings the keys up to
// date, as a cursor move does.
func (h *harness) pick(key string) {
	h.t.Helper()
	if !h.m.current().GoTo(key) {
		h.t.Fatalf("no row %q in %s", key, paneSpecs[h.m.pane].name)
	}
	h.m.syncKeys()
}

// The Workers pane shows a run's spend and its pause; p asks the engine to
// pause or resume a local run, and is off with a reason elsewhere.
func TestWorkersPauseKey(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.pausedWorkers(t)
	h := newHarness(t, p, 160, 40)
	h.press("4")
	v := h.view()
	for _, want := range []string{"1.2M tokens, $3.40", "⏸ paused"} {
		if !strings.Contains(v, want) {
			t.Errorf("the pane lacks %q:\n%s", want, v)
		}
	}
	k := &h.m.Keys.Workers.Pause
	for agent, why := range map[string]string{
		"w-budget": "w-budget reached its budget: extend it or stop it in the inbox (7)",
		"w-old":    "w-old's driver cannot pause a run",
		"w-far":    "w-far does not run on this machine",
	} {
		h.pick(agent)
		if k.Enabled() || !strings.Contains(h.m.Why["p"], why) {
			t.Errorf("%s: p enabled %v, why %q; want off: %q", agent, k.Enabled(), h.m.Why["p"], why)
		}
	}
	// The engine's own refusal (its pid is this test's) shows it was asked,
	// and with which verb.
	for agent, want := range map[string]string{"w-run": "✗ pause: w-run: pid ", "w-hand": "✗ resume: w-hand: pid "} {
		h.pick(agent)
		if !k.Enabled() {
			t.Fatalf("%s: p off: %s", agent, h.m.Why["p"])
		}
		h.press("p")
		if f := h.footer(); !strings.Contains(f, want) || !strings.Contains(f, "is this program") {
			t.Errorf("%s: p gave %q, want %q", agent, f, want)
		}
	}
	// The detail says why it is paused.
	h.pick("w-budget")
	h.press("enter")
	if v := h.view(); !strings.Contains(v, "Spend") || !strings.Contains(v, "budget reached: run budget (2M tokens)") {
		t.Errorf("the detail lacks the pause:\n%s", v)
	}
}

// Paused runs wait in the inbox after the proposals: b extends a
// budget-paused run's plan (a real extension file), p resumes one paused
// by hand, x stops one; each is off with a reason where it does not apply.
func TestInboxPausedRuns(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addProposal(t)
	p.pausedWorkers(t)
	h := newHarness(t, p, 120, 36)
	h.press("7")
	want := []string{"search-history", "paused\x00w-budget", "paused\x00w-far", "paused\x00w-hand"}
	if !slices.Equal(inboxOf(&h.m).Keys, want) {
		t.Errorf("rows %q, want %q", inboxOf(&h.m).Keys, want)
	}
	if v := h.view(); !strings.Contains(v, "⏸ budget reached") || !strings.Contains(v, "⏸ paused by the operator") {
		t.Errorf("the paused runs are not listed:\n%s", v)
	}
	k := &h.m.Keys.Inbox
	h.pick("paused\x00w-hand")
	if k.Extend.Enabled() || !strings.Contains(h.m.Why["b"], "paused by hand") || !k.Resume.Enabled() || !k.Stop.Enabled() {
		t.Errorf("w-hand: b %v (%s), p %v, x %v", k.Extend.Enabled(), h.m.Why["b"], k.Resume.Enabled(), k.Stop.Enabled())
	}
	h.press("p")
	if f := h.footer(); !strings.Contains(f, "✗ resume: w-hand: pid ") {
		t.Errorf("p gave %q", f)
	}
	h.pick("paused\x00w-far")
	if k.Stop.Enabled() || !strings.Contains(h.m.Why["x"], "does not run on this machine") {
		t.Errorf("w-far: x %v (%s)", k.Stop.Enabled(), h.m.Why["x"])
	}
	h.pick("paused\x00w-budget")
	if k.Resume.Enabled() || !strings.Contains(h.m.Why["p"], "waits at its budget") || !k.Extend.Enabled() {
		t.Errorf("w-budget: p %v (%s), b %v", k.Resume.Enabled(), h.m.Why["p"], k.Extend.Enabled())
	}
	// enter: the worker's detail, which says why it waits.
	h.press("enter")
	if v := h.view(); !strings.Contains(v, "worker · w-budget") || !strings.Contains(v, "budget reached: run budget (2M tokens)") {
		t.Errorf("enter on a paused run:\n%s", v)
	}
	h.press("esc")
	// x: a confirm, then the engine's stop (refused: its pid is this test's).
	h.press("x")
	if !h.dialogOpen() {
		t.Fatalf("x opened no dialog")
	}
	h.press("enter")
	if f := h.footer(); !strings.Contains(f, "✗ stop: w-budget: pid ") {
		t.Errorf("x gave %q", f)
	}
	// b: how much, refused until it reads, then written for the plan.
	h.press("b")
	h.typeText("lots")
	h.press("enter")
	if !h.dialogOpen() {
		t.Fatalf("b took %q", "lots")
	}
	for range len("lots") {
		h.press("backspace")
	}
	h.typeText("1M, $5")
	h.press("enter")
	if f := h.footer(); !strings.Contains(f, "✓ raised search's budget by 1M tokens, $5") {
		t.Errorf("b gave %q", f)
	}
	got, err := ledger.Extended(p.dir, "search")
	if err != nil || got != (spend.Limit{Tokens: 1_000_000, USD: 5}) {
		t.Errorf("extended by %+v, %v", got, err)
	}
}

// A hub reads the spend once for its sessions, and again when a worker's
// state file changes: a run paused is in the next reading.
func TestHubReadsFleet(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addSpend(t, "20")
	hub := newHub(t, p)
	mb := hub.Subscribe()
	defer mb.Close()
	next := func(ok func(uictx.FleetMsg) bool) {
		t.Helper()
		deadline := time.After(15 * time.Second)
		for {
			got := make(chan tea.Msg, 1)
			go func() { got <- waitHubCmd(mb)() }()
			select {
			case msg := <-got:
				msgs, _ := msg.(hubMsg)
				for _, m := range msgs {
					if f, is := m.(uictx.FleetMsg); is && ok(f) {
						return
					}
				}
			case <-deadline:
				t.Fatal("no such reading of the fleet in 15 s")
			}
		}
	}
	next(func(f uictx.FleetMsg) bool {
		return f.Err == nil && f.Fleet.Today.USD > 11.19 && f.Fleet.Today.USD < 11.21
	})
	p.pausedWorkers(t)
	next(func(f uictx.FleetMsg) bool { return len(f.Paused) == 3 })
}

// A viewer sees the paused runs and the pause but may not act on them.
func TestViewerCannotPauseOrExtend(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.pausedWorkers(t)
	p.tree.ReadOnly = true
	opt := p.options()
	opt.ReadOnly, opt.NoEditor = true, true
	h := newHarnessWith(t, p, opt, 120, 36)
	h.press("7")
	h.pick("paused\x00w-budget")
	if h.m.Keys.Inbox.Extend.Enabled() || h.m.Why["b"] != "read-only: viewers can't extend a budget" {
		t.Errorf("b for a viewer: %v, %q", h.m.Keys.Inbox.Extend.Enabled(), h.m.Why["b"])
	}
	h.press("4")
	h.pick("w-run")
	if h.m.Keys.Workers.Pause.Enabled() || h.m.Why["p"] != "read-only: viewers can't pause a worker" {
		t.Errorf("p for a viewer: %v, %q", h.m.Keys.Workers.Pause.Enabled(), h.m.Why["p"])
	}
}

// Settings that cannot be read: the pane says why, not that there are no
// budgets.
func TestFleetUnreadableSettings(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	if err := os.WriteFile(filepath.Join(p.dir, "fleetwatch.yaml"), []byte("budgets: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, p, 120, 30)
	h.press("8")
	v := h.view()
	if !strings.Contains(v, "⚠ cannot read the spend: ") || strings.Contains(v, "no budgets") {
		t.Errorf("the pane:\n%s", v)
	}
}

// Budgets written while the UI runs show when the pane is shown again:
// fleetwatch.yaml is no file the watchers follow.
func TestFleetReadWhenShown(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 120, 36)
	h.press("8")
	if v := h.view(); !strings.Contains(v, "no budgets") {
		t.Fatalf("before:\n%s", v)
	}
	p.addSpend(t, "20")
	h.press("1", "8")
	if v := h.view(); !strings.Contains(v, "fleet today") || !strings.Contains(strings.SplitN(v, "\n", 2)[0], "$11.20 today") {
		t.Errorf("after the budgets were written and the pane shown again:\n%s", v)
	}
}

// While an endpoint is in trouble the Fleet pane says which and until
// when, and what each endpoint spent today; with none in trouble it has
// no such box (TestGoldenFleet).
func TestFleetEndpointStates(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addSpend(t, "20")
	now := testNow
	for _, st := range []look.EndpointState{
		{Name: "claude", State: look.EndpointShut, Trouble: "usage_window", Reason: "usage limit reached", Since: now, Until: now.Add(2 * time.Hour), Reset: now.Add(2 * time.Hour)},
		{Name: "gem", State: look.EndpointDisabled, Trouble: "auth", Reason: "401 invalid key", Since: now},
		{Name: "old", State: look.EndpointBackingOff, Reason: "429", Since: now.Add(-time.Hour), Until: now.Add(-time.Minute)},
	} {
		if err := look.WriteEndpoint(p.dir, st); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, p, 160, 48)
	h.press("8")
	v := h.view()
	for _, want := range []string{"Endpoints · now", "⚠ shut until ", ": usage limit reached · 1.5M tokens, $10.70 today",
		"⚠ disabled: 401 invalid key (fleetwatch endpoints clear gem)", "local", "ok · 415k tokens, $0.50 today"} {
		if !strings.Contains(v, want) {
			t.Errorf("the pane lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "backing off") || strings.Contains(v, "old ") {
		t.Errorf("an endpoint whose backoff ended is still shown:\n%s", v)
	}
}

// The demo's Fleet pane was empty ("no runs recorded yet", "no
// budgets"): its project carries a week of runs against its budgets.
func TestDemoFleetPaneShowsRunsAndBudgets(t *testing.T) {
	t.Parallel()
	h := newHarness(t, demoProject(t), 120, 36)
	h.press("8")
	v := h.view()
	for _, want := range []string{"fleet today", "of $25", "tier reasoner today", "of $12"} {
		if !strings.Contains(v, want) {
			t.Errorf("the Fleet pane lacks %q:\n%s", want, v)
		}
	}
	for _, tier := range []string{"mid", "reasoner", "small"} {
		if r := lineWith(v, "  "+tier+" "); !strings.Contains(r, "$") || strings.Contains(r, " 0     0 ") {
			t.Errorf("no runs for %s: %q\n%s", tier, r, v)
		}
	}
	for _, gone := range []string{"no runs recorded yet", "no budgets"} {
		if strings.Contains(v, gone) {
			t.Errorf("the Fleet pane says %q:\n%s", gone, v)
		}
	}
}
