package ui

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// noPID is above any pid Linux hands out (PID_MAX_LIMIT is 2^22): a
// process that is surely gone.
const noPID = 1<<22 + 1

// addWorkers writes the state files of five workers (ago = before testNow),
// started in the order listed (the pane's order):
//
//	mid-1       on build-7, live: heartbeat 20s ago, holds export-pdf
//	small-2     on build-7, stale: heartbeat 2h ago, holds old-import
//	reasoner-1  here, dead: its process is gone
//	mid-2       on build-7, exited 0 after parking improve-perf
//	small-3     on build-7, exited 2
//
// and logs for mid-1 and small-2.
func (p *project) addWorkers(t testing.TB) {
	t.Helper()
	host, _ := os.Hostname()
	at := func(ago time.Duration) look.Stamp { return look.Stamp{Time: testNow.Add(-ago)} }
	zero, two := 0, 2
	for _, st := range []look.State{
		{PID: 4123, AgentID: "mid-1", Tier: "mid", Model: "qwen3-32b", Plan: "in-progress/export-pdf.md", Host: "build-7",
			Started: at(30 * time.Hour), LastHeartbeat: at(20 * time.Second), HeartbeatEvery: 30, State: look.StateRunning, Note: "running the executor"},
		{PID: 3001, AgentID: "small-2", Tier: "small", Plan: "in-progress/old-import.md", Host: "build-7",
			Started: at(28 * time.Hour), LastHeartbeat: at(2 * time.Hour), HeartbeatEvery: 30, State: look.StateRunning},
		{PID: noPID, AgentID: "reasoner-1", Tier: "reasoner", Endpoint: "big-box", Host: host,
			Started: at(29 * time.Hour), LastHeartbeat: at(time.Minute), HeartbeatEvery: 30, State: look.StateRunning, Note: "claiming"},
		{PID: 2890, AgentID: "mid-2", Tier: "mid", Plan: "ambiguous/improve-perf.md", Host: "build-7",
			Started: at(27 * time.Hour), LastHeartbeat: at(26 * time.Hour), State: look.StateExited, ExitCode: &zero, Note: "parked improve-perf"},
		{PID: 2950, AgentID: "small-3", Tier: "small", Host: "build-7",
			Started: at(4 * time.Hour), LastHeartbeat: at(3 * time.Hour), State: look.StateExited, ExitCode: &two, Note: "executor exited 2; the lease runs out"},
	} {
		if err := look.WriteState(p.dir, st); err != nil {
			t.Fatal(err)
		}
	}
	p.log(t, "mid-1",
		"2025-06-02T09:20:00.000Z fleet claimed in-progress/export-pdf.md",
		"2025-06-02T09:20:01.000Z fleet running the executor in var/worktrees/mid-1",
		"2025-06-02T09:21:10.000Z out reading src/export/",
		"2025-06-02T09:24:30.000Z err warning: no fonts configured; using the default",
		"2025-06-02T09:29:40.000Z out wrote pdf.go (120 lines)")
	p.log(t, "small-2",
		"2025-06-02T07:30:00.000Z fleet claimed in-progress/old-import.md",
		"2025-06-02T07:30:02.000Z out looking at the importer",
		"plain line from a program that wrote the file itself")
}

// log appends lines to agent's log.
func (p *project) log(t testing.TB, agent string, lines ...string) {
	t.Helper()
	path := look.LogPath(p.dir, agent)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// workerAgents is the agents the Workers pane lists, in order.
func (h *harness) workerAgents() []string {
	var out []string
	for _, r := range h.m.wrk.rows {
		out = append(out, r.St.AgentID)
	}
	return out
}

// selectWorker moves the Workers pane's cursor onto agent.
func (h *harness) selectWorker(agent string) {
	h.t.Helper()
	h.press("4")
	if !workersOf(&h.m).GoTo(agent) {
		h.t.Fatalf("%s is not among the workers %v", agent, h.workerAgents())
	}
	h.m.syncKeys()
}

// row is the screen line that shows s.
func row(v, s string) string {
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

func TestWorkersPaneShowsEveryWorkerAndState(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addWorkers(t)
	// An unreadable state file is reported, not fatal.
	if err := os.WriteFile(filepath.Join(p.dir, "var", "fleet", "workers", "broken.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, p, 120, 32)
	if header := strings.SplitN(h.view(), "\n", 2)[0]; !strings.Contains(header, " · 1 stale, 1 dead") {
		t.Errorf("header %q", header)
	}
	h.press("4")
	if got := h.workerAgents(); !slices.Equal(got, []string{"mid-1", "reasoner-1", "small-2", "mid-2", "small-3"}) {
		t.Errorf("rows %v: by when each run started", got)
	}
	v := h.view()
	for agent, want := range map[string][]string{
		"mid-1":      {"mid/qwen3-32b", "export-pdf", "● live", "20s", "4123", "on build-7: running the"},
		"small-2":    {"small ", "old-import", "◌ stale", "2h00m", "3001"},
		"reasoner-1": {"big-box reasoner", "✗ dead", "claiming"},
		"mid-2":      {"improve-perf", "exited 0", "1d2h", "on build-7: parked"},
		"small-3":    {"exited 2", "executor exited 2"},
	} {
		line := row(v, " "+agent+" ")
		for _, w := range want {
			if !strings.Contains(line, w) {
				t.Errorf("%s's row %q lacks %q", agent, line, w)
			}
		}
	}
	if strings.Contains(row(v, " reasoner-1 "), "on ") {
		t.Errorf("a worker of this host names its host: %q", row(v, " reasoner-1 "))
	}

	// x says why it cannot stop each of these.
	for agent, why := range map[string]string{
		"mid-1":      "✗ stop: mid-1 runs on build-7; stop it there",
		"reasoner-1": "✗ stop: reasoner-1's process is gone (dead); nothing to stop",
		"mid-2":      "✗ stop: mid-2 has already exited",
	} {
		h.selectWorker(agent)
		h.press("x")
		if h.dialogOpen() || !strings.Contains(h.footer(), why) {
			t.Errorf("x on %s: dialog %v, status %q", agent, h.dialogOpen(), h.footer())
		}
	}
	h.press("5")
	if v := h.view(); !strings.Contains(v, "⚠ worker state: unreadable: var/fleet/workers/broken.json") {
		t.Errorf("the events pane does not report the broken state file:\n%s", v)
	}

	// Narrow: the same rows, cut to fit.
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.press("4")
	v = h.view()
	if !strings.Contains(row(v, " mid-1 "), "● live") || !strings.Contains(row(v, " small-3 "), "exited 2") {
		t.Errorf("narrow workers pane:\n%s", v)
	}
	if header := strings.SplitN(v, "\n", 2)[0]; !strings.Contains(header, "[4 Workers]") {
		t.Errorf("narrow header %q", header)
	}
}

// The pane follows the state files: a new worker shows up when the
// watcher says so, and the clock turns a silent one stale.
func TestWorkersPaneFollowsStateFilesAndTheClock(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 120, 32)
	h.press("4")
	if v := h.view(); !strings.Contains(v, "no workers") || strings.Contains(strings.SplitN(v, "\n", 2)[0], "worker") {
		t.Fatalf("an empty pane, and no count in the header:\n%s", v)
	}
	st := look.State{PID: 77, AgentID: "small-9", Tier: "small", Host: "build-7", State: look.StateRunning,
		Started: look.Stamp{Time: testNow}, LastHeartbeat: look.Stamp{Time: testNow}, HeartbeatEvery: 30}
	if err := look.WriteState(p.dir, st); err != nil {
		t.Fatal(err)
	}
	h.send(stateChangeMsg{})
	if v := h.view(); !strings.Contains(row(v, " small-9 "), "● live") || !strings.Contains(v, "1 worker ") {
		t.Fatalf("after the state file came:\n%s", v)
	}
	// Two heartbeat intervals of silence make it stale, with no file
	// changing: the tick judges it again.
	p.at(-61 * time.Second)
	h.send(tickMsg(testNow))
	if v := h.view(); !strings.Contains(row(v, " small-9 "), "◌ stale") || !strings.Contains(row(v, " small-9 "), "1m") ||
		!strings.Contains(v, " · 1 stale") {
		t.Errorf("a minute on:\n%s", v)
	}
}

// spawnProject is the sample project with the fake driver as the binary
// spawned workers run.
func spawnHarness(t *testing.T, w, h int) (*project, *harness) {
	t.Helper()
	p := newProject(t)
	opt := p.options()
	opt.Self = testkit.FakeDriver(t)
	hs := newHarnessWith(t, p, opt, w, h)
	t.Cleanup(func() {
		for _, c := range hs.m.wrk.children {
			testkit.KillGroup(c.State.PID)
		}
	})
	return p, hs
}

// configure tells the fake driver of agent how to behave (see
// workers/testdata/fakedriver).
func (p *project) configure(t *testing.T, agent, conf string) {
	t.Helper()
	dir := filepath.Join(p.dir, ".fake")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, tree.SafeID(agent)+".conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeArgv is the command line agent's fake driver was started with.
func (p *project) fakeArgv(t *testing.T, agent string) []string {
	t.Helper()
	var argv []string
	eventually(t, agent+" recorded its argv", func() bool {
		data, err := os.ReadFile(filepath.Join(p.dir, ".fake", tree.SafeID(agent)+".argv"))
		return err == nil && json.Unmarshal(data, &argv) == nil
	})
	return argv
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSpawnFormValidatesThenStartsAWorker(t *testing.T) {
	t.Parallel()
	p, h := spawnHarness(t, 160, 40)
	h.press("2", "s") // from any pane
	if h.m.formShown() == nil {
		t.Fatal("s opened no form")
	}
	// No endpoints.yaml: the tiers, mid first.
	v := h.view()
	for _, want := range []string{"Spawn a worker", "▸ run as     ‹ mid ›", "small mid reasoner frontier", "tier mid (no endpoints.yaml: tiers only)", "ui-mid-1", "‹ run: claim, then the executor works it in a worktree ›"} {
		if !strings.Contains(v, want) {
			t.Errorf("form lacks %q:\n%s", want, v)
		}
	}
	h.press("left", "left") // mid → small → frontier (round)
	if v := h.view(); !strings.Contains(v, "‹ frontier ›") || h.m.formShown().agent.Value() != "ui-frontier-1" {
		t.Errorf("tier choice, agent %q:\n%s", h.m.formShown().agent.Value(), v)
	}
	h.press("right", "right", "right") // reasoner
	if h.m.formShown().agent.Value() != "ui-reasoner-1" {
		t.Errorf("the default agent id did not follow the tier: %q", h.m.formShown().agent.Value())
	}
	h.press("tab")
	h.typeText("qwen3-32b")
	h.press("tab")
	h.send(tea.KeyMsg{Type: tea.KeyCtrlU})
	h.typeText("ui r7")
	h.press("enter")
	if h.m.formShown() == nil || !strings.Contains(h.view(), `✗ agent id "ui r7" has a blank`) {
		t.Fatalf("a bad agent id was not refused in the form:\n%s", h.view())
	}
	h.press("backspace", "backspace", "backspace")
	h.typeText("-7")
	h.press("left") // a choice no more: the arrows edit the text
	if h.m.formShown().agent.Value() != "ui-7" || h.m.formShown().choice != 2 {
		t.Errorf("agent %q, choice %d", h.m.formShown().agent.Value(), h.m.formShown().choice)
	}
	h.press("tab", " ", "tab", "backspace")
	h.typeText("0")
	h.press("enter")
	if h.m.formShown() == nil || !strings.Contains(h.view(), `✗ max plans: a number from 1 to 100, not "0"`) {
		t.Fatalf("max plans 0 was not refused:\n%s", h.view())
	}
	h.press("backspace")
	h.typeText("3")
	if strings.Contains(h.view(), "✗ max plans") {
		t.Error("the error outlived the next key")
	}
	h.press("right", "right") // the cursor can't leave the field: harmless
	h.press("enter")
	if h.m.formShown() != nil {
		t.Fatalf("the form stayed open:\n%s", h.view())
	}
	if f := h.footer(); !strings.Contains(f, "✓ spawned ui-7 (pid ") || !strings.Contains(f, "claim only, up to 3 plans") {
		t.Errorf("status %q", f)
	}
	want := append(proc.WorkArgs(p.dir, proc.Spec{Agent: "ui-7", Tier: "reasoner", Model: "qwen3-32b"}), "--max-plans", "3")
	if got := p.fakeArgv(t, "ui-7"); !slices.Equal(got, want) {
		t.Errorf("argv %q, want %q", got, want)
	}
	// It wrote no state file (the fake does not, unless asked), yet it
	// shows: started here, then exited with its code.
	<-h.m.wrk.children[0].Done()
	h.send(stateChangeMsg{})
	h.press("4")
	if r := row(h.view(), " ui-7 "); !strings.Contains(r, "exited 0") || !strings.Contains(r, "reasoner/qwen3-32b") || !strings.Contains(r, "started here; wrote no state file") {
		t.Errorf("the spawned worker's row %q", r)
	}

	// The next form's default skips ui-7's kin only when they share an id.
	h.press("s")
	if h.m.formShown().agent.Value() != "ui-mid-1" {
		t.Errorf("default agent id %q", h.m.formShown().agent.Value())
	}
	h.press("esc")
	if h.m.formShown() != nil {
		t.Error("esc did not close the form")
	}
}

func TestSpawnRefusesARunningAgentAndNeedsSelf(t *testing.T) {
	t.Parallel()
	p, h := spawnHarness(t, 100, 30)
	host, _ := os.Hostname()
	// Our own pid stands in for a live process of this host.
	st := look.State{PID: os.Getpid(), AgentID: "busy-1", Tier: "mid", Host: host, State: look.StateRunning,
		Started: look.Stamp{Time: testNow}, LastHeartbeat: look.Stamp{Time: testNow}, HeartbeatEvery: 30}
	if err := look.WriteState(p.dir, st); err != nil {
		t.Fatal(err)
	}
	h.send(stateChangeMsg{})
	h.press("s", "tab", "tab")
	h.send(tea.KeyMsg{Type: tea.KeyCtrlU})
	h.typeText("busy-1")
	h.press("enter")
	if h.m.formShown() == nil || !strings.Contains(h.view(), "✗ busy-1 is running (live); pick another agent id or stop it first") {
		t.Errorf("a running agent id was not refused:\n%s", h.view())
	}
	if len(h.m.wrk.children) != 0 {
		t.Error("a worker was started")
	}

	// Without its own binary, the UI cannot spawn and says why.
	p2 := newProject(t)
	h2 := newHarness(t, p2, 80, 24)
	h2.press("s")
	if h2.m.formShown() != nil || !strings.Contains(h2.footer(), "✗ spawn: this UI does not know its own binary") {
		t.Errorf("s without Self: form %v, status %q", h2.m.formShown() != nil, h2.footer())
	}
}

// TestStopAWorkerSpawnedFromTheUI spawns a real detached worker (the fake
// driver) from the form, then stops it with x: its driver gets SIGTERM
// and records its exit.
func TestStopAWorkerSpawnedFromTheUI(t *testing.T) {
	t.Parallel()
	p, h := spawnHarness(t, 120, 32)
	p.configure(t, "ui-mid-1", "sleep=30s\nstate=1\n")
	h.press("s", "enter")
	if len(h.m.wrk.children) != 1 {
		t.Fatalf("no worker started: %q", h.footer())
	}
	c := h.m.wrk.children[0]
	eventually(t, "the worker wrote its state file", func() bool {
		states, _ := look.ReadStates(p.dir)
		return len(states) == 1
	})
	// The fake's clock is the real one: judge it at the real time.
	p.tree.Now = time.Now
	h.send(stateChangeMsg{})
	h.selectWorker("ui-mid-1")
	if r := row(h.view(), " ui-mid-1 "); !strings.Contains(r, "● live") || !strings.Contains(r, "fake-plan") {
		t.Fatalf("row %q", r)
	}
	h.press("x")
	v := h.view()
	if !h.dialogOpen() || !strings.Contains(v, "Stop ui-mid-1") || !strings.Contains(v, "(pid "+kit.Itoa(c.State.PID)+")") ||
		!strings.Contains(v, "fake-plan") {
		t.Fatalf("stop dialog:\n%s", v)
	}
	h.press("enter")
	if f := h.footer(); !strings.Contains(f, "✓ sent SIGTERM to ui-mid-1 (pid ") {
		t.Errorf("status %q", f)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not exit after x")
	}
	if data, _ := os.ReadFile(filepath.Join(p.dir, ".fake", "ui-mid-1.term")); string(data) != "SIGTERM" {
		t.Errorf("the driver did not record SIGTERM: %q", data)
	}
	h.send(stateChangeMsg{})
	if r := row(h.view(), " ui-mid-1 "); !strings.Contains(r, "exited 0") || !strings.Contains(r, "stopped by SIGTERM") {
		t.Errorf("row after stop %q", r)
	}
	h.press("x")
	if h.dialogOpen() || !strings.Contains(h.footer(), "has already exited") {
		t.Errorf("x on an exited worker: %q", h.footer())
	}
}

// logText is what pane i of the logs view holds, one line each, as drawn.
func (h *harness) logText(i int) string {
	if h.m.logsShown() == nil || i >= len(h.m.logsShown().panes) {
		return ""
	}
	var out []string
	for _, l := range h.m.logsShown().panes[i].lines {
		out = append(out, uictx.LogLine(h.m.Common, l))
	}
	return strings.Join(out, "\n")
}

func TestLogsSideBySideFollowScrollAndClose(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addWorkers(t)
	var filler []string
	for i := range 40 {
		filler = append(filler, "2025-06-02T09:29:"+fmt.Sprintf("%02d", i)+".000Z out step "+kit.Itoa(i))
	}
	p.log(t, "mid-1", filler...)
	h := newHarness(t, p, 160, 40)
	h.selectWorker("mid-1")
	h.press(" ", "j", " ") // marks mid-1, then small-2 (the cursor moves on)
	if !slices.Equal(workersOf(&h.m).Marks(), []string{"mid-1", "small-2"}) {
		t.Fatalf("marks %v", workersOf(&h.m).Marks())
	}
	if v := h.view(); !strings.HasPrefix(strings.TrimSpace(row(v, " mid-1 ")), "│  1 mid-1") || !strings.Contains(row(v, " small-2 "), "2 small-2") {
		t.Errorf("marks on screen:\n%s", v)
	}
	h.press("l")
	h.pumpLogs("both logs loaded", func() bool {
		return strings.Contains(h.logText(0), "step 39") && strings.Contains(h.logText(1), "plain line")
	})
	tails := h.m.logsShown().tails()
	v := h.view()
	top := strings.SplitN(v, "\n", 3)[1]
	if !strings.Contains(top, "▸ mid-1 · ● live · export-pdf") || !strings.Contains(top, "small-2 · ◌ stale · old-import") {
		t.Errorf("side by side, titled with agent, state and plan:\n%s", v)
	}
	for _, want := range []string{"09:20:00 » claimed in-progress/export-pdf.md", "09:24:30 ! warning: no fonts", "09:21:10   reading src/export/"} {
		if !strings.Contains(h.logText(0), want) {
			t.Errorf("mid-1's log lacks %q:\n%s", want, h.logText(0))
		}
	}
	for _, want := range []string{"09:29:39   step 39", "07:30:00 » claimed in-progress/old-import.md", "plain line from a program"} {
		if !strings.Contains(v, want) {
			t.Errorf("the screen lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "09:20:00 » claimed") {
		t.Errorf("the pane does not show the newest lines:\n%s", v)
	}

	// New lines follow; an escape sequence in a log never reaches the screen.
	p.log(t, "mid-1", "2025-06-02T09:30:00.000Z out compiling \x1b]0;owned\x07 \x1b[31mred\x1b[0m")
	h.pumpLogs("the new line", func() bool { return strings.Contains(h.logText(0), "compiling") })
	if v := h.view(); !strings.Contains(v, "09:30:00   compiling ?]0;owned? ?[31mred?[0m") {
		t.Errorf("new line:\n%s", v)
	}
	// Scrolled up, a pane stays put while lines come, until G.
	h.press("k")
	p.log(t, "mid-1", "2025-06-02T09:30:05.000Z out linking")
	h.pumpLogs("linking", func() bool { return strings.Contains(h.logText(0), "linking") })
	v = h.view()
	if pane := h.m.logsShown().panes[0]; pane.off != 2 || strings.Contains(v, "linking") || !strings.Contains(v, "↑2 · G follows") {
		t.Errorf("scrolled up by one, then a line came: off %d\n%s", pane.off, v)
	}
	h.press("G")
	if v := h.view(); !strings.Contains(v, "linking") || h.m.logsShown().panes[0].off != 0 {
		t.Errorf("G did not follow again:\n%s", v)
	}
	h.press("g")
	if v := h.view(); !strings.Contains(v, "09:20:00 » claimed") {
		t.Errorf("g: the first line is not on screen:\n%s", v)
	}
	off := h.m.logsShown().panes[0].off
	h.press("tab", "j")
	if h.m.logsShown().focus != 1 || h.m.logsShown().panes[0].off != off || off == 0 {
		t.Errorf("tab: focus %d, first pane off %d (was %d)", h.m.logsShown().focus, h.m.logsShown().panes[0].off, off)
	}
	if v := h.view(); !strings.Contains(strings.SplitN(v, "\n", 3)[1], "▸ small-2") {
		t.Errorf("the focused pane is not marked:\n%s", v)
	}

	// Narrow: stacked.
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	v = h.view()
	lines := strings.Split(v, "\n")
	if !strings.Contains(lines[1], "mid-1 · ● live") || strings.Contains(lines[1], "small-2") || row(v, "▸ small-2") == "" {
		t.Errorf("narrow logs are not stacked:\n%s", v)
	}

	// esc closes the view and stops following.
	h.press("esc")
	if h.m.logsShown() != nil {
		t.Fatal("esc did not close the logs")
	}
	for i, tl := range tails {
		closed := false
		for deadline := time.After(5 * time.Second); !closed; {
			select {
			case _, ok := <-tl.Lines():
				closed = !ok
			case <-deadline:
				t.Fatalf("tail %d still open after esc", i)
			}
		}
	}
	if h.m.pane != workersPane {
		t.Errorf("after the logs: pane %s", paneSpecs[h.m.pane].name)
	}
}

func TestLogsOfTheSelectedWorkerAndAtMostFour(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addWorkers(t)
	h := newHarness(t, p, 120, 32)
	h.selectWorker("small-3") // no log yet
	h.press("l")
	h.pumpLogs("the pane opened", func() bool { return h.m.logsShown().panes[0].open })
	if v := h.view(); !strings.Contains(v, "small-3 · exited 2") || !strings.Contains(v, "no lines yet in var/fleet/logs/small-3.log") {
		t.Errorf("a log not written yet:\n%s", v)
	}
	p.log(t, "small-3", "2025-06-02T09:30:00.000Z fleet late line")
	h.pumpLogs("the file came", func() bool { return strings.Contains(h.logText(0), "late line") })
	h.press("q") // q closes the logs, not the program
	if h.quit || h.m.logsShown() != nil {
		t.Fatalf("q in the logs: quit %v, logs open %v", h.quit, h.m.logsShown() != nil)
	}
	h.press("g", " ", " ", " ", " ", " ")
	if len(workersOf(&h.m).Marks()) != 4 || !strings.Contains(h.footer(), "✗ logs show at most four workers side by side") {
		t.Errorf("marks %v, status %q", workersOf(&h.m).Marks(), h.footer())
	}
	h.press("l")
	if n := len(h.m.logsShown().panes); n != 4 {
		t.Fatalf("%d panes", n)
	}
	h.pumpLogs("four panes opened", func() bool {
		for _, p := range h.m.logsShown().panes {
			if !p.open {
				return false
			}
		}
		return true
	})
	v := h.view()
	lines := strings.Split(v, "\n")
	if strings.Count(lines[1], "┌") != 2 || strings.Count(v, "┌") != 4 {
		t.Errorf("four logs at 120 columns are not two by two:\n%s", v)
	}
	h.press("esc", "esc") // the second esc clears the marks
	if len(workersOf(&h.m).Marks()) != 0 {
		t.Errorf("marks after esc %v", workersOf(&h.m).Marks())
	}
	h.press("l")
	if len(h.m.logsShown().panes) != 1 || h.m.logsShown().panes[0].agent != "small-3" {
		t.Errorf("l without marks opens the selected worker's log: %+v", h.m.logsShown().panes)
	}
}

// TestStateWatcherRefreshesWorkersPane runs the real program with its
// watchers: a worker that writes its state file shows up, and its exit
// too, without a key.
func TestStateWatcherRefreshesWorkersPane(t *testing.T) {
	t.Parallel()
	p := newProject(t) // no var/ yet: the watcher waits for it
	opt := p.options()
	opt.NoWatch = false
	tm := teatest.NewTestModel(t, New(opt), teatest.WithInitialTermSize(120, 32))
	waitFor(t, tm, []string{"crash-on-save"})
	tm.Send(keyMsg("4"))
	waitFor(t, tm, []string{"no workers"})
	st := look.State{PID: 77, AgentID: "small-9", Tier: "small", Host: "build-7", State: look.StateRunning,
		Started: look.Stamp{Time: testNow}, LastHeartbeat: look.Stamp{Time: testNow}, HeartbeatEvery: 30, Note: "claiming"}
	if err := look.WriteState(p.dir, st); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, []string{"small-9", "● live", "1 worker "})
	code := 1
	st.State, st.ExitCode, st.Note = look.StateExited, &code, "nothing to claim"
	if err := look.WriteState(p.dir, st); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, []string{"exited 1", "nothing to claim"})
	tm.Send(keyMsg("q"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if final.problem != "" {
		t.Errorf("a watcher reported a problem: %s", final.problem)
	}
}

// In colour the new screens still fit exactly, and a log's own escape
// sequences never reach the terminal among the styles'.
func TestWorkerScreensFitInColour(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addWorkers(t)
	p.log(t, "mid-1", "2025-06-02T09:30:00.000Z err \x1b]0;owned\x07\x1b[2J\x9b31m gone")
	opt := p.options()
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	r.SetHasDarkBackground(true)
	opt.Renderer, opt.Self = r, "/usr/local/bin/fleetwatch"
	h := newHarnessWith(t, p, opt, 80, 24)
	check := func(what string) {
		t.Helper()
		v := h.m.View()
		lines := strings.Split(v, "\n")
		if len(lines) != h.m.Height {
			t.Errorf("%s: %d lines, want %d", what, len(lines), h.m.Height)
		}
		for i, l := range lines {
			if n := ansi.StringWidth(l); n > h.m.Width {
				t.Errorf("%s: line %d is %d cells wide: %q", what, i+1, n, l)
			}
		}
		if strings.Contains(v, "\x1b]") || strings.Contains(v, "\x07") || strings.Contains(v, "\x1b[2J") || strings.Contains(v, "\u009b") {
			t.Errorf("%s: a log's escape sequence reached the screen: %q", what, v)
		}
	}
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		h.press("4", "g")
		check("workers")
		h.press(" ", "j", " ", "l")
		h.pumpLogs("the logs", func() bool {
			return strings.Contains(h.logText(0), "gone") && strings.Contains(h.logText(1), "plain line")
		})
		check("logs")
		if !strings.Contains(ansi.Strip(h.m.View()), "09:30:00 ! ?]0;owned??[2J?31m gone") {
			t.Errorf("the cleaned line:\n%s", ansi.Strip(h.m.View()))
		}
		h.press("esc", "esc", "s")
		check("spawn form")
		h.press("esc")
	}
}

// The Workers list keeps its order under the cursor: a worker that exits
// stays in its row, the cursor stays on its worker and row, and marks stay
// on the workers marked.
func TestWorkersKeepTheirOrderWhileWorkersExit(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addWorkers(t)
	h := newHarness(t, p, 120, 32)
	h.press("4")
	before := h.workerAgents()
	h.selectWorker("reasoner-1")
	h.press(" ")
	h.selectWorker("small-2")
	h.press(" ") // marks it and steps down
	h.selectWorker("small-2")
	cursor := workersOf(&h.m).Cursor
	// mid-1 and small-2, above and under the cursor, exit.
	one := 1
	for _, agent := range []string{"mid-1", "small-2"} {
		st := h.m.wrk.byAgent(agent).St
		st.State, st.ExitCode, st.Note = look.StateExited, &one, "agent exited 0 but made no commit: nothing changed; parked in blocked/"
		if err := look.WriteState(p.dir, st); err != nil {
			t.Fatal(err)
		}
	}
	h.send(stateChangeMsg{})
	if w := h.m.wrk.byAgent("mid-1"); w == nil || w.Health != look.Exited {
		t.Fatalf("mid-1's exit was not read:\n%s", h.view())
	}
	if got := h.workerAgents(); !slices.Equal(got, before) {
		t.Errorf("rows %v after two exits, were %v", got, before)
	}
	if w := h.m.selectedWorker(); w == nil || w.St.AgentID != "small-2" || workersOf(&h.m).Cursor != cursor {
		t.Errorf("the cursor moved off small-2 (row %d, was %d)", workersOf(&h.m).Cursor, cursor)
	}
	if !slices.Equal(workersOf(&h.m).Marks(), []string{"reasoner-1", "small-2"}) {
		t.Errorf("marks %v, want reasoner-1 and small-2", workersOf(&h.m).Marks())
	}
	// Each exit is a notice that says why, in the driver's words.
	said := false
	for _, n := range h.m.notes.list {
		said = said || n.Text == "mid-1 exited 1 on in-progress/export-pdf.md: agent exited 0 but made no commit: nothing changed; parked in blocked/"
	}
	if !said {
		t.Errorf("no notice of mid-1's exit with its reason: %+v", h.m.notes.list)
	}
}
