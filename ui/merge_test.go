package ui

import (
	"errors"
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

	"github.com/fleetwatch/fleetwatch/ui/mergekeys"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// The Merge pane is driven by the listing the engine would return: these
// tests inject it as the mergeMsg mergeCmd brings, so no engine is needed.

func at(n int) *int { return &n }

// sampleListing is a queue of three and four other candidates, one of
// each state the pane colours.
func sampleListing(p *project) landing.Listing {
	when := testNow.Add(-time.Hour)
	checks := func(rs ...landing.Result) []landing.CheckResult {
		var out []landing.CheckResult
		for i, r := range rs {
			out = append(out, landing.CheckResult{Name: []string{"test", "lint"}[i], Result: r, Exit: 0,
				Log: filepath.Join(p.dir, "var", "fleet", "checks", fmt.Sprintf("c%d.log", i)), Took: 2 * time.Second})
		}
		return out
	}
	review := func(verdict, by, commit string, stale bool) []landing.Review {
		return []landing.Review{{Commit: commit, Reviewer: by, Verdict: verdict, At: when, Stale: stale,
			Path: filepath.Join(p.tree.Plans, "reviews", "x", commit+".md")}}
	}
	return landing.Listing{
		Integration: "dev", Tip: "1a2b3c4d5e6f", CheckNames: []string{"test", "lint"},
		Items: []landing.Status{
			{Slug: "crash-on-save", Rel: "review-needed/crash-on-save.md", State: landing.Stale, Why: "the branch moved after review",
				Branch: "feature/crash-on-save", Commit: "99aa88bb77cc", Ahead: 2, Behind: 1, ApprovedBy: "",
				Approval: &landing.Approval{Commit: "1111111aaaa", By: "alice", At: when, Stale: true},
				Reviews:  review("ACCEPT", "rev-mid", "1111111aaaa", true), Checks: checks(landing.Missing, landing.Missing)},
			{Slug: "export-pdf", Rel: "review-needed/export-pdf.md", State: landing.Checking, Position: at(2), Why: "lint running",
				Branch: "feature/export-pdf", Commit: "5e5e5e5e5e5e", Ahead: 1, ApprovedBy: "alice",
				Approval: &landing.Approval{Commit: "5e5e5e5e5e5e", By: "alice", At: when},
				Reviews:  review("ACCEPT", "rev-big", "5e5e5e5e5e5e", false), Checks: checks(landing.Pass, landing.Running)},
			{Slug: "theme-engine", Rel: "review-needed/theme-engine.md", State: landing.Ready, Position: at(1),
				Branch: "feature/theme-engine", Commit: "abcdef0123456", Ahead: 3, ApprovedBy: "alice", Candidate: "c0ffee00c0ffee", Tree: "7ee7ee7ee",
				Approval: &landing.Approval{Commit: "abcdef0123456", By: "alice", At: when},
				Reviews:  review("ACCEPT", "rev-mid", "abcdef0123456", false), Checks: checks(landing.Pass, landing.Pass)},
			{Slug: "login-timeout", Rel: "review-needed/login-timeout.md", State: landing.Conflict, Position: at(3),
				Branch: "feature/login-timeout", Commit: "7777777abc", Ahead: 1, Behind: 4, ApprovedBy: "bob",
				ConflictPaths: []string{"auth/session.go", "auth/token.go"}, Checks: checks(landing.Missing, landing.Missing)},
			{Slug: "flaky-ci", Rel: "review-needed/flaky-ci.md", State: landing.NeedsReview, Branch: "feature/flaky-ci",
				Commit: "f1f1f1f1f1", Ahead: 5, Checks: checks(landing.Missing, landing.Missing)},
			{Slug: "old-import", Rel: "review-needed/old-import.md", State: landing.Failed, Why: "test failed, lint timed out",
				Branch: "feature/old-import", Commit: "0101010101", Ahead: 1, ApprovedBy: "alice",
				Approval: &landing.Approval{Commit: "0101010101", By: "alice", At: when},
				Reviews:  review("REVISE", "rev-big", "0101010101", false), Checks: checks(landing.Fail, landing.Timeout)},
		},
	}
}

// mergeHarness opens the UI with the sample listing on the Merge pane.
func mergeHarness(t *testing.T, w, h int, l func(*project) landing.Listing) *harness {
	t.Helper()
	p := newProject(t)
	opt := p.options()
	opt.Self = "/usr/local/bin/fleetwatch"
	hs := newHarnessWith(t, p, opt, w, h)
	hs.send(mergeMsg{listing: l(p)})
	hs.press("6")
	if hs.m.pane != mergePane {
		t.Fatalf("6 shows %s", paneSpecs[hs.m.pane].name)
	}
	return hs
}

// selectSlug moves the cursor onto slug.
func (h *harness) selectSlug(slug string) {
	h.t.Helper()
	h.press("g")
	for i := 0; ; i++ {
		if r := mergeOf(&h.m).Row(); r != nil && r.Slug == slug {
			return
		}
		if i > mergeOf(&h.m).Len() {
			h.t.Fatalf("%s is not in the merge pane:\n%s", slug, h.view())
		}
		h.press("j")
	}
}

func TestGoldenMerge(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			h := mergeHarness(t, size[0], size[1], sampleListing)
			v := h.view()
			for _, want := range []string{"integration dev @ 1a2b3c4 · 3 queued · checks: test, lint", "theme-engine", "commits", "↑3 ↓0", "✓✓", "✓…", "✗◷", "··"} {
				if !strings.Contains(v, want) {
					t.Errorf("the pane lacks %q:\n%s", want, v)
				}
			}
			teatest.RequireEqualOutput(t, []byte(h.m.View()))
		})
	}
}

func TestMergeRowsQueueFirst(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 120, 36, sampleListing)
	var got []string
	for _, j := range mergeOf(&h.m).Shown() {
		got = append(got, h.m.merge.listing.Items[j].Slug)
	}
	want := "theme-engine export-pdf login-timeout crash-on-save flaky-ci old-import"
	if strings.Join(got, " ") != want {
		t.Errorf("rows %v, want %s", got, want)
	}
	v := h.view()
	for _, w := range []string{"conflict in auth/session.go", "ACCEPT rev-mid stale", "alice stale", "needs review"} {
		if !strings.Contains(v, w) {
			t.Errorf("no %q:\n%s", w, v)
		}
	}
}

func TestMergeKeysFollowState(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 120, 36, sampleListing)
	k := &h.m.Keys.Merge
	cases := []struct {
		slug                        string
		approve, add, remove, needs bool
	}{
		{"theme-engine", false, false, true, true},
		{"crash-on-save", true, false, false, true},
		{"flaky-ci", true, false, false, true},
		{"old-import", false, true, false, true},
	}
	for _, c := range cases {
		h.selectSlug(c.slug)
		got := []bool{k.Approve.Enabled(), k.Add.Enabled(), k.Remove.Enabled(), k.NeedsWork.Enabled()}
		want := []bool{c.approve, c.add, c.remove, c.needs}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: approve, add, remove, needs work = %v, want %v", c.slug, got, want)
		}
		if !k.Land.Enabled() || !k.Peer.Enabled() || !k.Open.Enabled() || !k.Diff.Enabled() {
			t.Errorf("%s: land, peer, open or diff disabled", c.slug)
		}
	}
	// A disabled key says why in the status line.
	h.selectSlug("flaky-ci")
	h.press("+")
	if f := h.footer(); !strings.Contains(f, "only approved candidates join the queue") {
		t.Errorf("+ on an unapproved row: %q", f)
	}
	// Off the pane its keys are off; in Plans, a parks again.
	h.press("1")
	if k.Approve.Enabled() || k.Land.Enabled() || k.Add.Enabled() {
		t.Error("merge keys enabled on the plans pane")
	}
	// Without the binary to run, v and m explain.
	h.press("6")
	h.m.Opt.Self = ""
	h.m.syncKeys()
	h.press("m")
	if f := h.footer(); !strings.Contains(f, "cannot start the lander") {
		t.Errorf("m without a binary: %q", f)
	}
}

func TestMergeLandNamesTheCommit(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 80, 24, sampleListing)
	h.selectSlug("flaky-ci") // m lands the head whatever is selected
	h.press("m")
	d := h.m.dialogShown()
	if d == nil {
		t.Fatal("m opened no dialog")
	}
	body := d.Title + "\n" + strings.Join(d.Body, "\n")
	for _, w := range []string{"Land theme-engine @ abcdef0", "frozen commit abcdef0 on feature/theme-engine", "dev @ 1a2b3c4", "Checks: test, lint", "land.log"} {
		if !strings.Contains(body, w) {
			t.Errorf("the land dialog lacks %q:\n%s", w, body)
		}
	}
	if len(d.Choices) != 0 {
		t.Errorf("a gated landing offers choices %v", d.Choices)
	}
	if v := h.view(); !strings.Contains(v, "Land theme-engine @ abcdef0") {
		t.Errorf("the dialog is not on screen:\n%s", v)
	}
	h.press("esc")
	if h.dialogOpen() {
		t.Error("esc left the dialog open")
	}
}

func TestMergeLandUngatedAsksExplicitly(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 80, 24, func(p *project) landing.Listing {
		l := sampleListing(p)
		l.CheckNames = nil
		for i := range l.Items {
			l.Items[i].Checks, l.Items[i].Ungated = nil, true
		}
		return l
	})
	if v := h.view(); !strings.Contains(v, "ungated (no checks in fleetwatch.yaml)") {
		t.Errorf("the info line does not say ungated:\n%s", v)
	}
	h.press("m")
	d := h.m.dialogShown()
	if d == nil || !strings.Contains(strings.Join(d.Body, " "), "ungated: no checks in fleetwatch.yaml") {
		t.Fatalf("the dialog does not say ungated: %+v", d)
	}
	if d.Choices[d.choice] != mergekeys.LandWait {
		t.Errorf("the default choice is %s, want wait", d.Choices[d.choice])
	}
	// enter on the default lands nothing.
	h.press("enter")
	if f := h.footer(); !strings.Contains(f, "nothing landed") {
		t.Errorf("enter on wait: %q", f)
	}
	// Choosing ungated is what lands: its command checks the head first,
	// and the refusal (the engine, or a head that moved) is an error line.
	h.press("m", "tab")
	if d := h.m.dialogShown(); d == nil || d.Choices[d.choice] != mergekeys.LandUngated {
		t.Fatal("tab did not choose ungated")
	}
}

func TestMergeApproveStaleSaysStale(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 80, 24, sampleListing)
	h.selectSlug("crash-on-save")
	h.press("A")
	d := h.m.dialogShown()
	if d == nil {
		t.Fatal("A opened no dialog")
	}
	body := d.Title + "\n" + strings.Join(d.Body, "\n")
	for _, w := range []string{"Approve crash-on-save @ 99aa88b", "⚠ stale: the branch moved after review", "approve by alice of 1111111 is stale", "not the tip: stale"} {
		if !strings.Contains(body, w) {
			t.Errorf("the approve dialog lacks %q:\n%s", w, body)
		}
	}
	// The engine refuses or the tip moved: an error line, never a crash.
	h.press("enter")
	if f := h.footer(); !strings.Contains(f, "✗ approve:") {
		t.Errorf("after enter: %q", f)
	}
}

func TestMergeNeedsWorkWantsANote(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 80, 24, sampleListing)
	h.selectSlug("login-timeout")
	h.press("X")
	d := h.m.dialogShown()
	if d == nil || d.Input == nil {
		t.Fatal("X opened no text field")
	}
	if !strings.Contains(strings.Join(d.Body, " "), "leaves the queue (place 3)") {
		t.Errorf("body %q", d.Body)
	}
	h.press("enter")
	if f := h.footer(); !strings.Contains(f, "say what needs doing") {
		t.Errorf("an empty note: %q", f)
	}
}

func TestMergeFilter(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 120, 36, sampleListing)
	h.press("/")
	h.typeText("auth/tok")
	h.press("enter")
	if mergeOf(&h.m).Len() != 1 || mergeOf(&h.m).Row().Slug != "login-timeout" {
		t.Fatalf("filter kept %d rows:\n%s", mergeOf(&h.m).Len(), h.view())
	}
	if v := h.view(); !strings.Contains(v, "Merge") || strings.Contains(v, "theme-engine") {
		t.Errorf("filtered view:\n%s", v)
	}
	h.press("esc")
	if mergeOf(&h.m).Len() != 6 {
		t.Errorf("esc left %d rows", mergeOf(&h.m).Len())
	}
}

func TestMergeErrorInWords(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 80, 24, sampleListing)
	h.send(mergeMsg{err: errors.New("dev: no such branch")})
	if v := h.view(); !strings.Contains(v, "merge queue: dev: no such branch") {
		t.Errorf("the error is not in the pane:\n%s", v)
	}
}

func TestMergeDetailShowsReviewsAndLogs(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 120, 36, sampleListing)
	l := h.m.merge.listing
	var s landing.Status
	for _, it := range l.Items {
		if it.Slug == "theme-engine" {
			s = it
		}
	}
	if err := os.MkdirAll(filepath.Dir(s.Reviews[0].Path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Reviews[0].Path, []byte("ACCEPT\n\n- the theme loader is tidy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(s.Checks[0].Log), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Checks[0].Log, []byte("ok  myapp/theme 0.2s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.selectSlug("theme-engine")
	h.press("enter")
	v := h.view()
	for _, w := range []string{"theme-engine · ready", "approved by alice at abcdef0", "✓ test pass", "ok  myapp/theme 0.2s",
		"Peer reviews, newest first", "ACCEPT by rev-mid at abcdef0", "- the theme loader is tidy"} {
		if !strings.Contains(v, w) {
			t.Errorf("the detail lacks %q:\n%s", w, v)
		}
	}
}

func TestMergeTickWhileShownOrChecking(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 80, 24, sampleListing)
	h.m.merge.ticking = false
	if cmd := h.update(mergeTickMsg{}); cmd == nil || !h.m.merge.ticking {
		t.Error("no next tick while the pane is shown")
	}
	h.press("1")
	h.m.merge.ticking = false
	// export-pdf is checking: the queue is still watched.
	if h.update(mergeTickMsg{}); !h.m.merge.ticking {
		t.Error("no next tick while a check runs")
	}
	h.m.merge.listing.Items = nil
	h.m.merge.ticking = false
	if h.update(mergeTickMsg{}); h.m.merge.ticking {
		t.Error("ticking with the pane hidden and nothing checking")
	}
}

func TestMergeHelpFitsNarrow(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 80, 24, sampleListing)
	h.selectSlug("flaky-ci")
	h.press("?")
	v := strings.Join(strings.Fields(h.view()), " ")
	for _, w := range []string{"A approve", "m land head", "v peer review", "Merge pane (6)", "closes this help"} {
		if !strings.Contains(v, w) {
			t.Errorf("help lacks %q:\n%s", w, v)
		}
	}
}

func TestMergePeerStartsDetached(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 80, 24, sampleListing)
	// A real child: true takes `review SLUG --peer --root P` and exits.
	h.m.Opt.Self = "/bin/true"
	h.selectSlug("flaky-ci")
	h.press("v")
	if f := h.footer(); !strings.Contains(f, "✓ peer review of flaky-ci started (log: var/fleet/logs/review-flaky-ci.log)") {
		t.Errorf("after v: %q", f)
	}
	log, err := os.ReadFile(filepath.Join(h.p.dir, "var", "fleet", "logs", "review-flaky-ci.log"))
	if err != nil || !strings.Contains(string(log), "starting true review flaky-ci --peer --root") {
		t.Errorf("the log: %q, %v", log, err)
	}
}

func TestMergeDiffOpens(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 80, 24, sampleListing)
	h.selectSlug("old-import")
	h.press("d")
	v, ok := find[*diffView](h.m.stack)
	if !ok || v.req != "plan\x00old-import" {
		t.Fatalf("d opened no diff of old-import: %+v", v)
	}
	h.press("esc")
	if _, ok := find[*diffView](h.m.stack); ok {
		t.Error("esc left the diff open")
	}
}

// TestMergeColoursKeepTheLayout: in colour the screen says the same words
// in the same cells as under NO_COLOR; the colours only add.
func TestMergeColoursKeepTheLayout(t *testing.T) {
	t.Parallel()
	for _, w := range []int{80, 120} {
		plain := mergeHarness(t, w, 24, sampleListing)
		p := newProject(t)
		opt := p.options()
		r := lipgloss.NewRenderer(io.Discard)
		r.SetColorProfile(termenv.ANSI256)
		r.SetHasDarkBackground(true)
		opt.Renderer, opt.Self = r, plain.m.Opt.Self
		h := newHarnessWith(t, p, opt, w, 24)
		h.send(mergeMsg{listing: sampleListing(plain.p)})
		h.press("6")
		colour := h.m.View()
		if !strings.Contains(colour, "\x1b[") {
			t.Fatal("no colour on an ANSI256 screen")
		}
		got, want := strings.Split(ansi.Strip(colour), "\n"), strings.Split(ansi.Strip(plain.m.View()), "\n")
		for i := range want {
			if i >= len(got) || strings.TrimRight(got[i], " ") != strings.TrimRight(want[i], " ") {
				t.Errorf("%d cols, line %d:\ncolour %q\nplain  %q", w, i+1, got[min(i, len(got)-1)], want[i])
			}
		}
	}
}

// m on a head that conflicts says, before anything runs, that it cannot
// land and what helps, and offers no landing.
func TestMergeLandConflictWarns(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 80, 24, func(p *project) landing.Listing {
		l := sampleListing(p)
		for i := range l.Items {
			if l.Items[i].Position != nil && *l.Items[i].Position == 1 {
				l.Items[i].State, l.Items[i].ConflictPaths = landing.Conflict, []string{"main.go"}
			}
		}
		return l
	})
	h.press("m")
	d := h.m.dialogShown()
	if d == nil {
		t.Fatal("m opened no dialog")
	}
	if body := strings.Join(d.Body, "\n"); !strings.Contains(body, "cannot land") || d.Do != nil {
		t.Errorf("the land dialog on a conflicting head does not warn, or offers to land:\n%s", body)
	}
	if v := h.view(); strings.Contains(v, "enter land") || !strings.Contains(v, "esc close") {
		t.Errorf("the dialog offers enter land:\n%s", v)
	}
}

// candidates is a listing of theme-engine, queued, and csv-import, the
// sample tree's plan in review-needed/, as set (theme-engine queues after
// it when it is queued).
func candidates(csv landing.Status) landing.Listing {
	csv.Slug, csv.Rel, csv.Branch, csv.Commit = "csv-import", "review-needed/csv-import.md", "feature/csv-import", "c5c5c5c5c5c5"
	if csv.Ahead == 0 && csv.State != landing.NoChange {
		csv.Ahead = 1
	}
	theme := at(1)
	if csv.Position != nil {
		theme = at(*csv.Position + 1)
	}
	return landing.Listing{
		Integration: "dev", Tip: "1a2b3c4d5e6f", CheckNames: []string{"test"},
		Items: []landing.Status{
			{Slug: "theme-engine", Rel: "review-needed/theme-engine.md", State: landing.Ready, Position: theme,
				Branch: "feature/theme-engine", Commit: "abcdef0123456", Ahead: 3, ApprovedBy: "alice",
				Checks: []landing.CheckResult{{Name: "test", Result: landing.Pass}}},
			csv,
		},
	}
}

// In the Plans pane, A, X, + and m act on the selected plan's own
// candidate, naming it, or say why not; never on the Merge pane's row.
func TestMergeKeysInPlansActOnTheSelectedPlan(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	opt := p.options()
	opt.Self = "/usr/local/bin/fleetwatch" // never run: only dialogs open
	h := newHarnessWith(t, p, opt, 120, 36)
	h.send(mergeMsg{listing: candidates(landing.Status{State: landing.NeedsReview})})
	h.selectPlan("review-needed/csv-import.md")
	for _, c := range []struct{ key, title string }{{"A", "Approve csv-import @ c5c5c5c"}, {"X", "Needs work: csv-import"}} {
		h.press(c.key)
		if d := h.m.dialogShown(); d == nil || d.Title != c.title {
			t.Fatalf("%s in Plans on csv-import: want the dialog %q:\n%s", c.key, c.title, h.view())
		}
		h.press("esc")
	}
	for key, want := range map[string]string{
		"+": "✗ add: only approved candidates join the queue; approve csv-import first (A)",
		"m": "✗ land: csv-import is not queued; only the queue's head lands",
	} {
		h.press(key)
		if f := h.footer(); !strings.Contains(f, want) || h.dialogOpen() {
			t.Errorf("%s in Plans on csv-import: %q, want %q", key, f, want)
		}
	}
	// Approved and at the queue's head, m lands it, and + is said to be done.
	h.send(mergeMsg{listing: candidates(landing.Status{State: landing.Ready, Position: at(1), ApprovedBy: "op"})})
	h.press("+")
	if f := h.footer(); !strings.Contains(f, "csv-import is in the queue already, at 1") {
		t.Errorf("+ on a queued candidate: %q", f)
	}
	h.press("m")
	if d := h.m.dialogShown(); d == nil || d.Title != "Land csv-import @ c5c5c5c" {
		t.Fatalf("m on the plan whose candidate heads the queue:\n%s", h.view())
	}
	h.press("esc")
	// A plan that is no candidate: each key says so, naming the plan.
	h.selectPlan("bugs/crash-on-save.md")
	for _, key := range []string{"A", "X", "+", "m"} {
		h.press(key)
		if f := h.footer(); !strings.Contains(f, "crash-on-save is not a merge candidate") || h.dialogOpen() {
			t.Errorf("%s on a plan with no candidate: %q", key, f)
		}
	}
}

// A branch not ahead of the integration branch shows no check glyphs and
// no approve; its row says why.
func TestMergeNoChangeRow(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 120, 36, func(*project) landing.Listing {
		return candidates(landing.Status{State: landing.NoChange, Why: "not ahead of the integration branch: no commit to review or land"})
	})
	h.selectSlug("csv-import")
	var row string
	for _, l := range strings.Split(h.view(), "\n") {
		if strings.Contains(l, "csv-import") {
			row = l
		}
	}
	if !strings.Contains(row, "no change") || !strings.Contains(row, "not ahead of the integration branch") || strings.ContainsAny(row, "✓✗·◷") {
		t.Errorf("the row of a branch not ahead: %q", row)
	}
	if h.m.Keys.Merge.Approve.Enabled() || h.m.Keys.Merge.Add.Enabled() {
		t.Error("approve or add offered on a branch with no change")
	}
	h.press("A")
	if f := h.footer(); !strings.Contains(f, "nothing to approve") || h.dialogOpen() {
		t.Errorf("A on a branch with no change: %q", f)
	}
}

// A change touching paths outside its scope says so on its row and in its
// detail; approving it asks again, naming the paths.
func TestMergeApproveOutOfScopeAsksAgain(t *testing.T) {
	t.Parallel()
	paths := []string{".plans/completed/csv-import.md", "secrets/key.pem"}
	h := mergeHarness(t, 160, 40, func(*project) landing.Listing {
		return candidates(landing.Status{State: landing.NeedsReview, ScopeViolations: paths})
	})
	h.selectSlug("csv-import")
	if v := h.view(); !strings.Contains(v, "⚠ 2 paths out of scope") {
		t.Errorf("the row does not show the violation:\n%s", v)
	}
	h.press("enter")
	if v := h.view(); !strings.Contains(v, "Out of scope: 2 paths") || !strings.Contains(v, "secrets/key.pem") {
		t.Errorf("the detail does not name the paths:\n%s", v)
	}
	h.press("esc", "A")
	d := h.m.dialogShown()
	if d == nil || !strings.Contains(strings.Join(d.Body, "\n"), "outside its plan's scope: .plans/completed/csv-import.md, secrets/key.pem") {
		t.Fatalf("the approve dialog does not name the violations:\n%s", h.view())
	}
	h.press("enter")
	d = h.m.dialogShown()
	if d == nil || d.Title != "Out of scope: csv-import" || d.Verb != "approve anyway" ||
		!strings.Contains(strings.Join(d.Body, "\n"), "  secrets/key.pem") {
		t.Fatalf("approve did not ask again:\n%s", h.view())
	}
	h.press("esc")
	if h.dialogOpen() || strings.Contains(h.footer(), "approved") {
		t.Errorf("esc on the second question approved, or left it open: %q", h.footer())
	}
}

// An approved change waiting to be queued is "approved", not a peer's
// "reviewed"; its reason names the key that queues it, to an operator.
func TestMergeApprovedRowNamesTheKey(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 160, 40, func(*project) landing.Listing {
		return candidates(landing.Status{State: landing.Approved, ApprovedBy: "op", Why: "approved by op; queue add to queue it",
			Reviews: []landing.Review{{Commit: "c5c5c5c5c5c5", Reviewer: "rev-big", Verdict: "REVISE"}}})
	})
	row := func() string {
		for _, l := range strings.Split(h.view(), "\n") {
			if strings.Contains(l, "csv-import") {
				return l
			}
		}
		return ""
	}
	if r := row(); !strings.Contains(r, " approved ") || !strings.Contains(r, "approved by op; + queues it") || strings.Contains(r, "queue add") {
		t.Errorf("the approved row: %q", r)
	}
	h.m.Opt.ReadOnly = true
	h.m.merge.Rebuild(h.m.ctx())
	if r := row(); !strings.Contains(r, "approved by op; not queued yet") {
		t.Errorf("a viewer's approved row: %q", r)
	}
}
