package ui

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/panes/plans"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// Each action test drives the model with keys, as an operator does, and
// then looks at the disk: the tree must really have changed.

func TestPromoteDraftToBugs(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.selectPlan("drafts/tag-suggest.md")
	h.press("p")
	if !h.dialogOpen() {
		t.Fatal("p on a draft opened no dialog")
	}
	v := h.view()
	for _, want := range []string{"Promote tag-suggest", "[features]", "enter promote"} {
		if !strings.Contains(v, want) {
			t.Errorf("promote dialog lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "⚠") {
		t.Errorf("a complete draft's dialog warns:\n%s", v)
	}
	h.press("tab")
	if v := h.view(); !strings.Contains(v, "[bugs]") {
		t.Fatalf("tab did not choose bugs:\n%s", v)
	}
	h.press("enter")
	if h.dialogOpen() {
		t.Fatal("enter left the dialog open")
	}
	if !p.exists("bugs/tag-suggest.md") || p.exists("drafts/tag-suggest.md") {
		t.Fatalf("not promoted to bugs: drafts %v, bugs %v", p.lane(t, model.Drafts), p.lane(t, model.Bugs))
	}
	if e := p.lastEvent(t); e.Event != "promote" || e.AgentID != "op" || e.To != "bugs/tag-suggest.md" {
		t.Errorf("last event %+v, want op's promote to bugs/tag-suggest.md", e)
	}
	if f := h.footer(); !strings.Contains(f, "✓ promoted tag-suggest → bugs") {
		t.Errorf("status line %q does not say what happened", f)
	}
	// The screen was reloaded: drafts now holds one plan.
	if n := plans.LaneCount(h.m.d, model.Drafts); n != 1 {
		t.Errorf("drafts count %d after the reload, want 1", n)
	}
}

func TestPromoteDraftWithProblemsWarnsAndForces(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.selectPlan("drafts/dark-mode.md")
	h.press("p")
	v := h.view()
	for _, want := range []string{"⚠ no `- **Preferred models:**` line", "⚠ no `## Done when`", "enter promote anyway"} {
		if !strings.Contains(v, want) {
			t.Errorf("promote dialog lacks %q:\n%s", want, v)
		}
	}
	h.press("enter")
	if !p.exists("features/dark-mode.md") || p.exists("drafts/dark-mode.md") {
		t.Fatalf("a draft with problems was not promoted on enter: features %v", p.lane(t, model.Features))
	}
	if f := h.footer(); !strings.Contains(f, "✓ promoted dark-mode → features") {
		t.Errorf("status line %q", f)
	}
}

func TestParkWithReason(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		keys []string
		to   model.Lane
	}{
		{"blocked", nil, model.Blocked},
		{"ambiguous after tab", []string{"tab"}, model.Ambiguous},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			h := newHarness(t, p, 80, 24)
			h.selectPlan("bugs/crash-on-save.md")
			h.press("a")
			if !h.dialogOpen() {
				t.Fatal("a on a ready plan opened no dialog")
			}
			h.typeText("waiting on ci")
			h.press(tc.keys...)
			if v := h.view(); !strings.Contains(v, "waiting on ci") || !strings.Contains(v, "["+string(tc.to)+"]") {
				t.Fatalf("park dialog does not show the reason and %s chosen:\n%s", tc.to, v)
			}
			h.press("enter")
			dst := string(tc.to) + "/crash-on-save.md"
			if !p.exists(dst) || p.exists("bugs/crash-on-save.md") {
				t.Fatalf("not parked in %s: %v", tc.to, p.lane(t, tc.to))
			}
			e := p.lastEvent(t)
			if e.Event != "park" || e.Reason != "waiting on ci" || e.AgentID != "op" || e.To != dst {
				t.Errorf("last event %+v, want op's park to %s with the reason", e, dst)
			}
			if f := h.footer(); !strings.Contains(f, "✓ parked crash-on-save in "+string(tc.to)) {
				t.Errorf("status line %q", f)
			}
		})
	}
}

func TestReturnParkedPlanToItsOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ rel, want string }{
		{"blocked/email-reminders.md", "bugs/email-reminders.md"},
		{"ambiguous/improve-perf.md", "features/improve-perf.md"},
	} {
		t.Run(tc.rel, func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			h := newHarness(t, p, 80, 24)
			h.selectPlan(tc.rel)
			h.press("u")
			if v := h.view(); !strings.Contains(v, "back to the ready lane it came from") {
				t.Fatalf("return dialog:\n%s", v)
			}
			h.press("enter")
			if !p.exists(tc.want) || p.exists(tc.rel) {
				t.Fatalf("%s not returned to %s", tc.rel, tc.want)
			}
			if e := p.lastEvent(t); e.Event != "return" || e.To != tc.want {
				t.Errorf("last event %+v", e)
			}
		})
	}
}

func TestReleaseLiveLeaseOfAnotherAgent(t *testing.T) {
	t.Parallel()
	for _, pane := range []string{"plans", "leases"} {
		t.Run(pane, func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			h := newHarness(t, p, 80, 24)
			if pane == "plans" {
				h.selectPlan("in-progress/export-pdf.md")
			} else {
				h.press("2", "g")
				for i := 0; leasesOf(&h.m).Key() != model.LeaseFileName("in-progress/export-pdf.md"); i++ {
					if i > 5 {
						t.Fatal("no lease row for export-pdf")
					}
					h.press("j")
				}
			}
			h.press("r")
			v := h.view()
			for _, want := range []string{"Release export-pdf", "mid-1 holds it, 50m00s left", "⚠ Releasing takes it from mid-1"} {
				if !strings.Contains(v, want) {
					t.Errorf("release dialog lacks %q:\n%s", want, v)
				}
			}
			h.press("enter")
			if !p.exists("features/export-pdf.md") || p.exists("in-progress/export-pdf.md") {
				t.Fatalf("export-pdf not back in features: %v", p.lane(t, model.Features))
			}
			if l := p.leaseOf("in-progress/export-pdf.md"); l != nil {
				t.Errorf("the lease is still there: %+v", l)
			}
			if f := h.footer(); !strings.Contains(f, "✓ released export-pdf → features") {
				t.Errorf("status line %q", f)
			}
			if n := len(h.m.d.Board.Leases); n != 1 {
				t.Errorf("%d leases on the board after the release, want 1", n)
			}
		})
	}
}

func TestRecoverExpiredLease(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.selectPlan("in-progress/old-import.md")
	h.press("R")
	v := h.view()
	for _, want := range []string{"Recover old-import", "lease expired 1h00m ago", "You (op) take the lease over for 1h00m"} {
		if !strings.Contains(v, want) {
			t.Errorf("recover dialog lacks %q:\n%s", want, v)
		}
	}
	h.press("enter")
	l := p.leaseOf("in-progress/old-import.md")
	if l == nil || l.AgentID != "op" {
		t.Fatalf("lease after recover: %+v, want op's", l)
	}
	now := float64(testNow.Unix())
	if l.ExpiresAt != now+planfs.DefaultTTL {
		t.Errorf("recovered lease expires at %v, want now+TTL %v", l.ExpiresAt, now+planfs.DefaultTTL)
	}
	if f := h.footer(); !strings.Contains(f, "✓ recovered old-import: now held by op") {
		t.Errorf("status line %q", f)
	}
	if v := h.view(); !strings.Contains(v, "op 1h00m") || strings.Contains(v, "(1 expired)") {
		t.Errorf("the screen does not show op's fresh lease:\n%s", v)
	}
}

func TestRecoverRefusesLiveLease(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.selectPlan("in-progress/export-pdf.md")
	before := p.state(t)
	h.press("R")
	if h.dialogOpen() {
		t.Fatal("R on a live lease opened a dialog")
	}
	if f := h.footer(); !strings.Contains(f, "✗ recover: select an expired, unreadable or left-over lease") {
		t.Errorf("status line %q", f)
	}
	if p.state(t) != before {
		t.Error("the tree changed")
	}
}

func TestComplete(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		keys []string
		to   model.Lane
	}{
		{"review-needed", nil, model.ReviewNeeded},
		{"completed after tab", []string{"tab"}, model.Completed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			h := newHarness(t, p, 80, 24)
			h.selectPlan("in-progress/export-pdf.md")
			h.press("c")
			if v := h.view(); !strings.Contains(v, "Complete export-pdf") {
				t.Fatalf("complete dialog:\n%s", v)
			}
			h.press(tc.keys...)
			h.press("enter")
			dst := string(tc.to) + "/export-pdf.md"
			if !p.exists(dst) || p.exists("in-progress/export-pdf.md") {
				t.Fatalf("export-pdf not in %s: %v", tc.to, p.lane(t, tc.to))
			}
			if l := p.leaseOf("in-progress/export-pdf.md"); l != nil {
				t.Errorf("the lease outlived the plan: %+v", l)
			}
			if e := p.lastEvent(t); e.Event != "complete" || e.To != dst || e.AgentID != "op" {
				t.Errorf("last event %+v", e)
			}
		})
	}
}

func TestEscCancelsEveryDialog(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	for _, tc := range []struct{ rel, key string }{
		{"drafts/tag-suggest.md", "p"},
		{"drafts/dark-mode.md", "p"},
		{"bugs/crash-on-save.md", "a"},
		{"blocked/email-reminders.md", "u"},
		{"in-progress/export-pdf.md", "r"},
		{"in-progress/export-pdf.md", "a"},
		{"in-progress/export-pdf.md", "u"},
		{"in-progress/export-pdf.md", "c"},
		{"in-progress/old-import.md", "R"},
	} {
		h.selectPlan(tc.rel)
		before := p.state(t)
		h.press(tc.key)
		if !h.dialogOpen() {
			t.Errorf("%s on %s opened no dialog", tc.key, tc.rel)
			continue
		}
		if tc.key == "a" {
			h.typeText("never mind")
		}
		h.press("tab", "esc")
		if h.dialogOpen() {
			t.Errorf("esc left the %s dialog of %s open", tc.key, tc.rel)
		}
		if p.state(t) != before {
			t.Errorf("%s on %s then esc changed the tree", tc.key, tc.rel)
		}
		if h.selected() != tc.rel {
			t.Errorf("after esc the cursor is on %q, want %s", h.selected(), tc.rel)
		}
		if f := h.footer(); strings.Contains(f, "✓") || strings.Contains(f, "✗") {
			t.Errorf("cancelling %s left a status: %q", tc.key, f)
		}
	}
}

func TestDisabledKeyExplainsAndChangesNothing(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.selectPlan("bugs/crash-on-save.md")
	before := p.state(t)
	for _, tc := range []struct{ key, why string }{
		{"p", "✗ promote: select a draft"},
		{"c", "✗ complete: select an in-progress plan"},
		{"u", "✗ return: select a parked or in-progress plan"},
		{"r", "✗ release: select a plan with a lease"},
	} {
		h.press(tc.key)
		if h.dialogOpen() {
			t.Fatalf("%s on a ready plan opened a dialog", tc.key)
		}
		if f := h.footer(); !strings.Contains(f, tc.why) {
			t.Errorf("%s: status line %q, want %q", tc.key, f, tc.why)
		}
	}
	if p.state(t) != before {
		t.Error("disabled keys changed the tree")
	}
	// Short help lists only what applies: park, not promote.
	h.press("j") // clears the status
	f := h.footer()
	if !strings.Contains(f, "a park") || strings.Contains(f, "p promote") {
		t.Errorf("short help %q should offer park and not promote", f)
	}
}

func TestEngineErrorShowsInStatusAndClearsOnNextKey(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.selectPlan("drafts/tag-suggest.md")
	h.press("p")
	// Someone else takes the draft away while the dialog is up.
	if err := os.Remove(p.tree.Abs("drafts/tag-suggest.md")); err != nil {
		t.Fatal(err)
	}
	h.press("enter")
	if h.quit {
		t.Fatal("an engine error quit the program")
	}
	f := h.footer()
	if !strings.Contains(f, "✗ promote: drafts/tag-suggest.md: not found") {
		t.Fatalf("status line %q does not show the engine's error", f)
	}
	if !h.m.statusErr {
		t.Error("the status is not marked as an error")
	}
	// The program keeps running: the reload dropped the plan, keys work.
	if slices.Contains(h.rows(), "drafts/tag-suggest.md") {
		t.Errorf("rows %v still list the removed draft", h.rows())
	}
	h.press("k")
	if f := h.footer(); strings.Contains(f, "✗") {
		t.Errorf("the error outlived the next key: %q", f)
	}
	if h.selected() != "drafts/dark-mode.md" {
		t.Errorf("cursor on %q, want the remaining draft", h.selected())
	}
}

func TestSuccessStatusStaysUntilReplaced(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.selectPlan("bugs/crash-on-save.md")
	h.press("a", "enter")
	h.press("j")
	if f := h.footer(); !strings.Contains(f, "✓ parked crash-on-save in blocked") {
		t.Errorf("a success status should stay until the next action: %q", f)
	}
	h.press("p")
	if f := h.footer(); strings.Contains(f, "✓") || !strings.Contains(f, "✗ promote") {
		t.Errorf("a new status should replace the old one: %q", f)
	}
}

func TestFilterNarrowsRowsAndEscClears(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	all := h.rows()
	if len(all) != 3 {
		t.Fatalf("bugs rows %v, want 3", all)
	}
	h.press("/")
	h.typeText("ci")
	if got := h.rows(); !slices.Equal(got, []string{"bugs/flaky-ci.md"}) {
		t.Errorf("filtering by ci: rows %v", got)
	}
	if f := h.footer(); !strings.Contains(f, "/ ci") {
		t.Errorf("the footer does not show the filter being typed: %q", f)
	}
	h.press("enter") // stop typing, keep the filter
	if got := h.rows(); !slices.Equal(got, []string{"bugs/flaky-ci.md"}) {
		t.Errorf("after enter: rows %v", got)
	}
	if f := h.footer(); !strings.Contains(f, "filter: ci (esc clears)") {
		t.Errorf("footer %q does not say a filter is on", f)
	}
	// The filter follows the operator to other lanes: by title, model, assignee.
	h.press("]")
	if got := h.rows(); !slices.Equal(got, []string{"features/ci-image.md"}) {
		t.Errorf("features filtered by ci: rows %v", got)
	}
	h.press("[", "esc")
	if got := h.rows(); !slices.Equal(got, all) {
		t.Errorf("esc did not clear the filter: rows %v", got)
	}
	// esc while typing drops the filter at once.
	h.press("/")
	h.typeText("zzz")
	if v := h.view(); len(h.rows()) != 0 || !strings.Contains(v, "matches /zzz") {
		t.Errorf("no match should say so:\n%s", v)
	}
	h.press("esc")
	if got := h.rows(); !slices.Equal(got, all) || plansOf(&h.m).Typing {
		t.Errorf("esc while typing: rows %v, still filtering %v", got, plansOf(&h.m).Typing)
	}
	// Filter by a person assignee.
	h.press("]", "/")
	h.typeText("alice")
	h.press("enter")
	if got := h.rows(); !slices.Equal(got, []string{"features/rotate-keys.md"}) {
		t.Errorf("filter by assignee alice: rows %v", got)
	}
}

func TestSelectionFollowsPlanAcrossReload(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.selectPlan("bugs/login-timeout.md")
	if plansOf(&h.m).Cursor != 1 {
		t.Fatalf("login-timeout at row %d, want 1", plansOf(&h.m).Cursor)
	}
	// A more urgent bug appears above it.
	if _, err := p.tree.AddPlanAt(model.Bugs, "hotfix.md", plan("Hot fix", "high", "P1", "small", "", "none"), testNow.Add(-10*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	h.send(changeMsg{})
	if got := h.rows(); len(got) != 4 || got[0] != "bugs/hotfix.md" {
		t.Fatalf("rows after the reload %v, want hotfix first", got)
	}
	if h.selected() != "bugs/login-timeout.md" || plansOf(&h.m).Cursor != 2 {
		t.Errorf("cursor on %q (row %d), want login-timeout, now row 2", h.selected(), plansOf(&h.m).Cursor)
	}
	// A reload where the selected plan went away keeps the cursor in place.
	if err := os.Remove(p.tree.Abs("bugs/login-timeout.md")); err != nil {
		t.Fatal(err)
	}
	h.send(changeMsg{})
	if h.selected() != "bugs/flaky-ci.md" {
		t.Errorf("cursor on %q after its plan vanished, want the next one", h.selected())
	}
}

func TestLaneSwitching(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	if plansOf(&h.m).Lane() != model.Bugs {
		t.Fatalf("starts on %s, want bugs", plansOf(&h.m).Lane())
	}
	steps := []struct {
		key  string
		want model.Lane
	}{
		{"right", model.Features}, {"]", model.InProgress}, {"left", model.Features},
		{"[", model.Bugs}, {"[", model.Drafts}, {"[", model.Completed}, {"]", model.Drafts},
	}
	for _, s := range steps {
		h.press(s.key)
		if plansOf(&h.m).Lane() != s.want {
			t.Fatalf("%s: lane %s, want %s", s.key, plansOf(&h.m).Lane(), s.want)
		}
		if !strings.Contains(h.view(), "["+string(s.want)+" ") {
			t.Errorf("%s: the lane strip does not mark %s:\n%s", s.key, s.want, h.view())
		}
	}
	// Each lane remembers its cursor.
	h.press("]", "j", "j")
	if h.selected() != "bugs/flaky-ci.md" {
		t.Fatalf("cursor on %q", h.selected())
	}
	h.press("]", "[")
	if h.selected() != "bugs/flaky-ci.md" {
		t.Errorf("back in bugs the cursor is on %q, want flaky-ci", h.selected())
	}
	// Off the plans pane, lane keys explain themselves.
	h.press("2", "]")
	if plansOf(&h.m).Lane() != model.Bugs {
		t.Errorf("] on the leases pane changed the lane to %s", plansOf(&h.m).Lane())
	}
	if f := h.footer(); !strings.Contains(f, "✗ lanes: switch to the plans pane (1)") {
		t.Errorf("status line %q", f)
	}
}

func TestPaneKeys(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	steps := []struct {
		key  string
		want uictx.PaneID
		tab  string
	}{
		{"2", leasesPane, "[2 Leases]"}, {"3", worktreesPane, "[3 Trees]"}, {"4", workersPane, "[4 Workers]"},
		{"5", eventsPane, "[5 Events]"}, {"1", plansPane, "[1 Plans]"}, {"tab", leasesPane, "[2 Leases]"},
		{"tab", worktreesPane, "[3 Trees]"}, {"tab", workersPane, "[4 Workers]"}, {"tab", eventsPane, "[5 Events]"},
		{"tab", mergePane, "[6 Merge]"}, {"tab", inboxPane, "[7 Inbox]"}, {"tab", fleetPane, "[8 Fleet]"}, {"tab", plansPane, "[1 Plans]"},
		{"shift+tab", fleetPane, "[8 Fleet]"}, {"shift+tab", inboxPane, "[7 Inbox]"}, {"shift+tab", mergePane, "[6 Merge]"},
		{"shift+tab", eventsPane, "[5 Events]"}, {"7", inboxPane, "[7 Inbox]"}, {"8", fleetPane, "[8 Fleet]"},
	}
	for _, s := range steps {
		h.press(s.key)
		if h.m.pane != s.want {
			t.Fatalf("%s: pane %s, want %s", s.key, paneSpecs[h.m.pane].name, paneSpecs[s.want].name)
		}
		v := h.view()
		if header := strings.SplitN(v, "\n", 2)[0]; !strings.Contains(header, s.tab) {
			t.Errorf("%s: header %q does not mark %s", s.key, header, s.tab)
		}
	}
	h.press("2")
	if v := h.view(); !strings.Contains(v, "EXPIRED 1h00m ago") || !strings.Contains(v, "in 50m00s") {
		t.Errorf("leases pane:\n%s", v)
	}
	h.press("3")
	if v := h.view(); !strings.Contains(v, "no agent worktrees under var/worktrees/") {
		t.Errorf("worktrees pane of a project without any:\n%s", v)
	}
	h.press("4")
	if v := h.view(); !strings.Contains(v, "no workers: the ones cron, systemd or anyone starts show here") {
		t.Errorf("workers pane of a project without any:\n%s", v)
	}
	h.press("5")
	if v := h.view(); !strings.Contains(v, "needs SMTP credentials") || !strings.Contains(v, "bold key without `-` bullet") {
		t.Errorf("events pane lacks a park reason or the scan warning:\n%s", v)
	}
}

func TestHelpShowsLegend(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	text := h.helpText()
	for _, want := range []string{"Tier columns (S M R F", "overqualified", "a park"} {
		if !strings.Contains(text, want) {
			t.Errorf("help lacks %q:\n%s", want, text)
		}
	}
	h.press("2")
	if text := h.helpText(); !strings.Contains(text, "Leases: ● live ✗ expired") {
		t.Errorf("Leases help lacks its legend:\n%s", text)
	}
	h.press("?", "j", "esc") // j scrolls a tall help; any other key closes it, and does nothing else
	if h.m.helpShown() || leasesOf(&h.m).Cursor != 0 {
		t.Errorf("after a key: help shown %v, cursor %d", h.m.helpShown(), leasesOf(&h.m).Cursor)
	}
	h.press("?", "q")
	if !h.quit {
		t.Error("q in the help did not quit")
	}
}

func TestQuit(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	for _, k := range []string{"q", "ctrl+c"} {
		h := newHarness(t, p, 80, 24)
		cmd := h.update(keyMsg(k))
		if cmd == nil {
			t.Fatalf("%s returned no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s did not return tea.Quit", k)
		}
	}
	// q while typing a filter or a park reason is text, not quit.
	h := newHarness(t, p, 80, 24)
	h.press("/", "q")
	if h.quit || plansOf(&h.m).Input.Value() != "q" {
		t.Errorf("q in the filter: quit %v, filter %q", h.quit, plansOf(&h.m).Input.Value())
	}
}

func TestPreviewFullScreenOnNarrowTerminal(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.press("enter")
	v := h.view()
	for _, want := range []string{"bugs/crash-on-save.md", "esc back", "Crash when saving a draft", "Done when"} {
		if !strings.Contains(v, want) {
			t.Errorf("full preview lacks %q:\n%s", want, v)
		}
	}
	h.press("esc")
	if h.m.reading() || !strings.Contains(h.view(), "[bugs 3]") {
		t.Errorf("esc did not go back to the lanes:\n%s", h.view())
	}
}

func TestCountdownTickReloadsWhenLeaseExpires(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.press("2")
	if v := h.view(); !strings.Contains(v, "in 50m00s") {
		t.Fatalf("leases pane:\n%s", v)
	}
	// (That the countdown moves between reloads: TestCountdownMovesOnTick.)
	p.at(-51 * time.Minute) // past export-pdf's expiry
	h.send(tickMsg(testNow))
	v := h.view()
	if !strings.Contains(v, "EXPIRED 1m00s ago") {
		t.Errorf("after its lease ran out the screen still shows it live:\n%s", v)
	}
	// The header counts it where it has the room (at 80 columns the
	// notice and the tabs take it).
	h.send(tea.WindowSizeMsg{Width: 120, Height: 24})
	if head := strings.SplitN(h.view(), "\n", 2)[0]; !strings.Contains(head, "2 leases (2 expired)") {
		t.Errorf("the header does not count the expired lease: %q", head)
	}
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	// Now R applies to it: expiry changed what the keys allow.
	h.press("G")
	h.press("R")
	if !h.dialogOpen() {
		t.Error("R on the newly expired lease opened no dialog")
	}
}

func TestPromoteByLetterAndYes(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.selectPlan("drafts/tag-suggest.md")
	h.press("p", "b", "y")
	if !p.exists("bugs/tag-suggest.md") {
		t.Fatalf("p b y did not promote to bugs: %v", p.lane(t, model.Bugs))
	}
	h.selectPlan("drafts/dark-mode.md")
	before := p.state(t)
	h.press("p", "n")
	if h.dialogOpen() || p.state(t) != before {
		t.Error("n did not cancel the promote dialog")
	}
}

func TestParkAndReturnInProgressPlanOfAnotherAgent(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.selectPlan("in-progress/export-pdf.md")
	h.press("a")
	if v := h.view(); !strings.Contains(v, "mid-1 holds it, 50m00s left.") || !strings.Contains(v, "⚠ Parking takes it from mid-1") {
		t.Errorf("park dialog does not warn whose plan it is:\n%s", v)
	}
	h.typeText("wrong approach")
	h.press("enter")
	if !p.exists("blocked/export-pdf.md") || p.leaseOf("in-progress/export-pdf.md") != nil {
		t.Fatalf("not parked, or the lease stayed: blocked %v", p.lane(t, model.Blocked))
	}
	// u sends it back where it was claimed from, not to the features fallback
	// by luck: check with the expired bugs/ plan too.
	h.selectPlan("in-progress/old-import.md")
	h.press("u")
	if v := h.view(); !strings.Contains(v, "small-2 held it; the lease expired 1h00m ago.") {
		t.Errorf("return dialog:\n%s", v)
	}
	h.press("enter")
	if !p.exists("bugs/old-import.md") || p.leaseOf("in-progress/old-import.md") != nil {
		t.Fatalf("old-import not returned to bugs/: %v", p.lane(t, model.Bugs))
	}
	if n := len(h.m.d.Board.Leases); n != 0 {
		t.Errorf("%d leases left on the board", n)
	}
}

func TestTreeVanishingKeepsRunning(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 120, 32)
	if err := os.RemoveAll(p.tree.Plans); err != nil {
		t.Fatal(err)
	}
	h.send(changeMsg{})
	if h.quit || h.m.loadErr == nil {
		t.Fatalf("quit %v, load error %v", h.quit, h.m.loadErr)
	}
	if header := strings.SplitN(h.m.View(), "\n", 2)[0]; !strings.Contains(header, "⚠") {
		t.Errorf("header %q does not warn", header)
	}
	// The last good board stays on screen and keys still work.
	h.press("j")
	if h.selected() != "bugs/login-timeout.md" {
		t.Errorf("cursor on %q", h.selected())
	}
	// The tree comes back: the warning goes.
	if _, err := planfs.Scaffold(p.dir); err != nil {
		t.Fatal(err)
	}
	h.send(changeMsg{})
	if h.m.loadErr != nil || strings.Contains(strings.SplitN(h.m.View(), "\n", 2)[0], "⚠") {
		t.Errorf("the warning outlived the tree's return: %v", h.m.loadErr)
	}
}

// Every screen, at every size, is exactly the terminal's height and no line
// is wider than it: nothing wraps.
func TestScreenFitsEverySize(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addWorkers(t)
	// A live worker of this host (our own pid stands in), so x asks.
	host, _ := os.Hostname()
	// Started first, it is the Workers pane's first row.
	here := look.State{PID: os.Getpid(), AgentID: "here-1", Tier: "mid", Host: host, State: look.StateRunning,
		Started: look.Stamp{Time: testNow.Add(-31 * time.Hour)}, LastHeartbeat: look.Stamp{Time: testNow}, HeartbeatEvery: 30}
	if err := look.WriteState(p.dir, here); err != nil {
		t.Fatal(err)
	}
	opt := p.options()
	opt.Self = "/usr/local/bin/fleetwatch" // never run: the form is only drawn
	h := newHarnessWith(t, p, opt, 80, 24)
	sizes := [][2]int{{1, 1}, {12, 3}, {30, 8}, {60, 15}, {79, 23}, {100, 19}, {120, 32}, {200, 60}}
	stopAsked := 0
	for _, sz := range sizes {
		h.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		h.press("1", "g")
		for _, k := range []string{"", "2", "3", "4", "5", "1", "?", "x", "enter", "esc", "]", "]", "]", "a", "esc", "/", "x", "esc", "[", "[", "p", "esc",
			"4", "g", " ", "j", " ", "j", " ", "G", " ", "l", "tab", "k", "g", "esc", "x", "j", "l", "esc", "g", "x", "esc",
			"s", "tab", "tab", "x", "enter", "esc"} {
			if k != "" {
				h.press(k)
			}
			_ = h.view() // checks the size
			if h.m.dialogShown() != nil && h.m.dialogShown().Title == "Stop here-1" {
				stopAsked++
			}
		}
		if h.m.formShown() != nil || h.m.logsShown() != nil || h.m.dialogShown() != nil {
			t.Fatalf("%dx%d: a form, logs or dialog is still open", sz[0], sz[1])
		}
		h.press("esc")
	}
	if stopAsked != len(sizes) {
		t.Errorf("the stop dialog opened at %d of %d sizes", stopAsked, len(sizes))
	}
}
