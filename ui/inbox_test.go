package ui

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/coord"
)

// sampleProposal is what the plan turn of reasoner-1 wrote for
// search-history: a plan with a Files in scope section.
const sampleProposal = "# Plan for search-history\n\nKeep the last 20 searches and offer them in the search box.\n\n" +
	"## Steps\n1. Store queries in `history.go`.\n2. Show them under the search box.\n\n" +
	"## Files in scope\n- src/search/**\n- docs/search.md\n"

// addProposal adds the plan-first plan search-history to p, claimed by
// reasoner-1, whose plan turn wrote proposal 1 (recorded by the driver, 5
// minutes before testNow) and handed the lease to the inbox: the real
// coord and planfs functions, as the driver calls them.
func (p *project) addProposal(t testing.TB) {
	t.Helper()
	tr := p.tree
	p.at(20 * time.Minute)
	text := "# Keep a search history\n\n- **Plan first:** yes\n- **Preferred models:** reasoner\n\n## Goal\nRecent searches, one key away.\n"
	if _, err := tr.AddPlanAt(model.Features, "search-history.md", text, testNow.Add(-20*time.Minute)); err != nil {
		t.Fatal(err)
	}
	p.at(10 * time.Minute)
	held, err := tr.ClaimHeld("features/search-history.md", "reasoner-1", 3600)
	if err != nil {
		t.Fatal(err)
	}
	path, n, err := coord.NextProposal(p.dir, "search-history")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(sampleProposal), 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := coord.RecordProposal(p.dir, coord.Record{Slug: "search-history", N: n, Plan: held.Rel, AgentID: "reasoner-1", RunID: "run-7"})
	if err != nil {
		t.Fatal(err)
	}
	// The record's clock is the machine's; the screens want the tree's.
	rec.At = testNow.Add(-5 * time.Minute)
	b, _ := json.MarshalIndent(rec, "", "  ")
	if err := os.WriteFile(filepath.Join(coord.ProposalDir(p.dir, "search-history"), fmt.Sprint(n)+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	p.at(5 * time.Minute)
	if err := tr.AwaitApproval(held.Rel, planfs.Actor{AgentID: "reasoner-1", Token: held.Token}); err != nil {
		t.Fatal(err)
	}
	p.at(0)
}

// inboxHarness opens the UI on the sample project with a waiting proposal,
// on the Inbox pane.
func inboxHarness(t *testing.T, w, h int) *harness {
	t.Helper()
	p := newProject(t)
	p.addProposal(t)
	hs := newHarness(t, p, w, h)
	hs.press("7")
	if hs.m.pane != inboxPane {
		t.Fatalf("7 shows %s", paneSpecs[hs.m.pane].name)
	}
	return hs
}

const heldRel = "in-progress/search-history.md"

func TestInboxListsWaitingProposal(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			h := inboxHarness(t, size[0], size[1])
			v := h.view()
			for _, want := range []string{"[7 Inbox]", "search-history", "reasoner-1", "awaiting approval", "2 files",
				"Files in scope", "src/search/**", "docs/search.md", "written by reasoner-1 in run run-7", "Keep the last 20 searches"} {
				if !strings.Contains(v, want) {
					t.Errorf("the pane lacks %q:\n%s", want, v)
				}
			}
			f := h.footer()
			for _, want := range []string{"A approve plan", "X reject plan"} {
				if !strings.Contains(f, want) && size[0] > 100 {
					t.Errorf("the help line lacks %q: %q", want, f)
				}
			}
			if !strings.Contains(f, "A approve plan") {
				t.Errorf("the help line lacks A: %q", f)
			}
		})
	}
}

func TestGoldenInbox(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			h := inboxHarness(t, size[0], size[1])
			teatest.RequireEqualOutput(t, []byte(h.view()))
		})
	}
}

func TestInboxApprove(t *testing.T) {
	t.Parallel()
	h := inboxHarness(t, 80, 24)
	h.press("A")
	d := h.m.dialogShown()
	if d == nil {
		t.Fatalf("A opened no dialog:\n%s", h.view())
	}
	body := strings.Join(d.Body, " ")
	if !strings.Contains(body, "Files in scope: src/search/**, docs/search.md") || !strings.Contains(body, "reasoner-1") {
		t.Errorf("the dialog does not show the scope: %q", body)
	}
	h.view()
	h.press("enter")
	if f := h.footer(); !strings.Contains(f, "✓ approved search-history") {
		t.Fatalf("after enter: %q", f)
	}
	l := h.p.leaseOf(heldRel)
	if l == nil || l.Awaiting != model.AwaitResume || l.AgentID != "reasoner-1" {
		t.Fatalf("the lease after approval: %+v", l)
	}
	es, err := coord.Inbox(h.p.tree)
	if err != nil || len(es) != 1 || es[0].Decision == nil || es[0].Decision.Verdict != coord.Approved || es[0].Decision.By != "op" {
		t.Fatalf("the decision on disk: %+v %v", es, err)
	}
	// The refresh shows it decided, and A no longer applies.
	v := h.view()
	if !strings.Contains(v, "approved by op, resumes with reasoner-1") {
		t.Errorf("the row after approval:\n%s", v)
	}
	h.press("A")
	if h.dialogOpen() {
		t.Error("A opened a dialog on a decided proposal")
	}
	if f := h.footer(); !strings.Contains(f, "is decided already") {
		t.Errorf("A on a decided proposal: %q", f)
	}
	// The Leases pane says who takes it up, in words, at 80 columns too.
	h.press("2")
	if v := h.view(); !strings.Contains(v, "decided, resumes with reasoner-1") {
		t.Errorf("the leases pane after approval:\n%s", v)
	}
}

func TestInboxRejectWithNote(t *testing.T) {
	t.Parallel()
	h := inboxHarness(t, 80, 24)
	h.press("X")
	d := h.m.dialogShown()
	if d == nil || d.Input == nil {
		t.Fatal("X opened no text field")
	}
	h.typeText("keep it to ten entries")
	h.press("enter")
	if f := h.footer(); !strings.Contains(f, "✓ rejected search-history") {
		t.Fatalf("after enter: %q", f)
	}
	es, err := coord.Inbox(h.p.tree)
	if err != nil || len(es) != 1 || es[0].Decision == nil || es[0].Decision.Verdict != coord.Rejected || es[0].Decision.Note != "keep it to ten entries" {
		t.Fatalf("the decision on disk: %+v %v", es, err)
	}
	if v := h.view(); !strings.Contains(v, "rejected by op") || !strings.Contains(v, "note: keep it to ten entries") {
		t.Errorf("the row after rejection:\n%s", v)
	}
}

func TestInboxRejectRefusesEmptyNote(t *testing.T) {
	t.Parallel()
	h := inboxHarness(t, 80, 24)
	h.press("X", "enter")
	if !h.dialogOpen() {
		t.Fatal("an empty note closed the dialog")
	}
	if v := h.view(); !strings.Contains(v, "a rejection needs a note") {
		t.Errorf("the dialog does not say why:\n%s", v)
	}
	if l := h.p.leaseOf(heldRel); l == nil || l.Awaiting != model.AwaitApproval {
		t.Fatalf("the lease after a refused rejection: %+v", l)
	}
	h.press("esc")
	if h.dialogOpen() {
		t.Error("esc left the dialog open")
	}
}

func TestInboxOpenReadsProposal(t *testing.T) {
	t.Parallel()
	h := inboxHarness(t, 80, 24)
	h.press("enter")
	v := h.view()
	for _, want := range []string{"search-history · proposal 1", "Store queries in history.go", "sha256"} {
		if !strings.Contains(v, want) {
			t.Errorf("the proposal lacks %q:\n%s", want, v)
		}
	}
}

func TestInboxKeysOffThePane(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addProposal(t)
	h := newHarness(t, p, 80, 24)
	h.press("A")
	if h.dialogOpen() {
		t.Error("A on the plans pane opened a dialog")
	}
	if l := h.p.leaseOf(heldRel); l == nil || l.Awaiting != model.AwaitApproval {
		t.Fatalf("the lease: %+v", l)
	}
}

// An inbox-held plan's lease says what it waits for, never a countdown or
// EXPIRED, in the Plans and Leases panes.
func TestAwaitingLeaseInWords(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addProposal(t)
	h := newHarness(t, p, 120, 36)
	h.selectPlan(heldRel)
	v := h.view()
	if !strings.Contains(v, "reasoner-1 awaiting approval") {
		t.Errorf("the plans pane:\n%s", v)
	}
	h.press("2")
	v = h.view()
	if !strings.Contains(v, "awaiting approval") {
		t.Errorf("the leases pane:\n%s", v)
	}
	for _, line := range strings.Split(v, "\n") {
		if strings.Contains(line, "search-history") && strings.Contains(line, "EXPIRED") {
			t.Errorf("an awaiting lease shows expired: %q", line)
		}
	}
}

// Under NO_COLOR (the Ascii profile) the pane has no escape code but the
// selection's reverse video (h.view checks it), and in colour it says the
// same words in the same cells: the colours only add.
func TestInboxColoursKeepTheLayout(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		plain := inboxHarness(t, size[0], size[1])
		v := plain.view()
		if sel := selectedLine(plain.m.View()); !strings.Contains(sel, uictx.ReverseOn+"▸ search-history") {
			t.Errorf("%v: the selected row is not reverse video: %q", size, sel)
		}
		p := newProject(t)
		p.addProposal(t)
		opt := p.options()
		r := lipgloss.NewRenderer(io.Discard)
		r.SetColorProfile(termenv.ANSI256)
		r.SetHasDarkBackground(true)
		opt.Renderer = r
		h := newHarnessWith(t, p, opt, size[0], size[1])
		h.press("7")
		colour := h.m.View()
		if !strings.Contains(colour, "\x1b[") {
			t.Fatal("no colour on an ANSI256 screen")
		}
		got, want := strings.Split(ansi.Strip(colour), "\n"), strings.Split(ansi.Strip(v), "\n")
		for i := range want {
			if i >= len(got) || strings.TrimRight(got[i], " ") != strings.TrimRight(want[i], " ") {
				t.Errorf("%v, line %d:\ncolour %q\nplain  %q", size, i+1, got[min(i, len(got)-1)], want[i])
			}
		}
	}
}
