package ui

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/fleetwatch/fleetwatch/model"
)

// The screens run the real program (teatest) on the sample project with no
// colour, and compare the final model's View with testdata/TestGoldenScreens/
// <screen>_<w>x<h>.golden. `go test ./ui -update` rewrites them: review the
// diff before committing.

// sendKeys presses keys in a running program.
func sendKeys(keys ...string) func(*teatest.TestModel) {
	return func(tm *teatest.TestModel) {
		for _, k := range keys {
			tm.Send(keyMsg(k))
		}
	}
}

func TestGoldenScreens(t *testing.T) {
	t.Parallel()
	screens := []struct {
		name string
		// trees gives the project agent worktrees first; workers, state
		// files and logs (and the UI a binary to spawn).
		trees, workers bool
		// viewer: a read-only session without an editor (serve's viewers).
		viewer bool
		// open is a pane to open first, and seen what it shows once it
		// has read its rows.
		open, seen string
		act        func(*teatest.TestModel)
		// want is text the screen shows once it has settled.
		want []string
	}{
		{name: "plans"},
		{name: "leases", act: sendKeys("2"), want: []string{"EXPIRED 1h00m ago", "in 50m00s"}},
		{name: "worktrees", trees: true, act: sendKeys("3"), want: []string{"var/worktrees/mid-1", "var/worktrees/small-2"}},
		{name: "events", act: sendKeys("5"), want: []string{"needs SMTP credentials"}},
		{name: "workers", workers: true, act: sendKeys("4"), want: []string{"◌ stale", "exited 2"}},
		{name: "logs", workers: true, act: sendKeys("4", " ", "j", " ", "l"),
			want: []string{"wrote pdf.go", "plain line from a program", "small-2 · ◌ stale · old-import"}},
		{name: "help", act: sendKeys("?"), want: []string{"closes this help"}},
		// `?` on every pane: its keys, greyed with the reason where they do
		// not apply, at the top of the help.
		// `?` on every pane, once the pane has read what it shows: its
		// keys, greyed with the reason where they do not apply.
		{name: "help-leases", open: "2", seen: "in 50m00s", act: sendKeys("?"), want: []string{"Leases pane (2)"}},
		{name: "help-worktrees", trees: true, open: "3", seen: "var/worktrees/mid-1", act: sendKeys("?"), want: []string{"Worktrees pane (3)"}},
		{name: "help-workers", workers: true, open: "4", seen: "exited 2", act: sendKeys("?"), want: []string{"Workers pane (4)"}},
		{name: "help-events", open: "5", seen: "needs SMTP credentials", act: sendKeys("?"), want: []string{"Events pane (5)"}},
		{name: "help-merge", open: "6", seen: "no candidates", act: sendKeys("?"), want: []string{"Merge pane (6)"}},
		{name: "help-inbox", open: "7", seen: "the inbox is empty", act: sendKeys("?"), want: []string{"Inbox pane (7)"}},
		{name: "park-dialog", act: func(tm *teatest.TestModel) {
			tm.Send(keyMsg("a"))
			tm.Type("flaky runner")
			tm.Send(keyMsg("tab"))
		}, want: []string{"flaky runner", "[ambiguous]"}},
		{name: "viewer-plans", viewer: true, act: sendKeys("p"), want: []string{"read-only: viewers can't promote"}},
		{name: "viewer-help", viewer: true, act: sendKeys("?"), want: []string{"closes this help"}},
	}
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		w, h := size[0], size[1]
		for _, sc := range screens {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, w, h), func(t *testing.T) {
				t.Parallel()
				p := newProject(t)
				if sc.trees {
					p.addWorktrees(t)
				}
				opt := p.options()
				if sc.workers {
					p.addWorkers(t)
					opt.Self = "/usr/local/bin/fleetwatch"
				}
				if sc.viewer {
					p.tree.ReadOnly = true
					opt.ReadOnly, opt.NoEditor = true, true
				}
				tm := teatest.NewTestModel(t, New(opt), teatest.WithInitialTermSize(w, h))
				// The first screen: the bugs lane, and on a wide terminal
				// the selected plan's preview.
				first := []string{"crash-on-save", "flaky-ci"}
				if sc.workers && w >= 100 {
					// At 80 columns the header has no room for them; the
					// pane that shows them is waited for below.
					first = append(first, "3 workers (1 stale, 1 dead)")
				}
				if w >= 100 {
					first = append(first, "Crash when saving a draft, for everyone, every time.")
				}
				waitFor(t, tm, first)
				if sc.open != "" {
					tm.Send(keyMsg(sc.open))
					waitFor(t, tm, []string{sc.seen})
				}
				if sc.act != nil {
					sc.act(tm)
					waitFor(t, tm, sc.want)
				}
				if err := tm.Quit(); err != nil {
					t.Fatal(err)
				}
				final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
				final.Close() // stops following logs
				v := final.View()
				checkScreen(t, v, w, h, p)
				teatest.RequireEqualOutput(t, []byte(v))
			})
		}
	}
}

// waitFor waits until the program has drawn every piece of text in want.
func waitFor(t *testing.T, tm *teatest.TestModel, want []string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(out []byte) bool {
		for _, s := range want {
			if !bytes.Contains(out, []byte(s)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(15*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

// TestGoldenScreensStable runs one screen twice in one process: the same
// tree must give byte-identical screens (no clocks, temp paths or map
// order leaking in).
func TestGoldenScreensStable(t *testing.T) {
	t.Parallel()
	var views []string
	for range 2 {
		p := newProject(t)
		h := newHarness(t, p, 160, 48)
		h.press("5")
		v := h.view()
		h.press("1")
		views = append(views, v+"\n"+h.view())
	}
	if views[0] != views[1] {
		t.Errorf("two identical trees gave different screens:\n%s\n---\n%s", views[0], views[1])
	}
	if strings.Contains(views[0], "/tmp") || strings.Contains(views[0], os.TempDir()) {
		t.Error("a screen shows a temp path")
	}
}

// TestWatcherRefreshesScreen runs the real program with its file watcher:
// plans and leases that other processes add show up without a key.
func TestWatcherRefreshesScreen(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	opt := p.options()
	opt.NoWatch = false
	tm := teatest.NewTestModel(t, New(opt), teatest.WithInitialTermSize(80, 24))
	waitFor(t, tm, []string{"crash-on-save", " · 1 expired"})
	if _, err := p.tree.AddPlanAt(model.Bugs, "hotfix.md", plan("Hot fix", "high", "P1", "small", "", "none"), testNow.Add(-10*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, []string{"hotfix", "[bugs 4]"})
	if _, err := p.tree.Claim("bugs/crash-on-save.md", "small-3", 600); err != nil {
		t.Fatal(err)
	}
	// A claim writes its lease, then moves the plan: a reading between
	// the two shows the lease with the plan still in bugs/.
	waitFor(t, tm, []string{"prog 3", "[bugs 3]"})
	tm.Send(keyMsg("q")) // q closes the watcher and quits
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if final.problem != "" {
		t.Errorf("the watcher reported a problem: %s", final.problem)
	}
	rows := strings.Join(func() []string {
		var out []string
		for _, r := range plansOf(&final).Rows() {
			out = append(out, r.Plan.Rel)
		}
		return out
	}(), " ")
	if rows != "bugs/hotfix.md bugs/login-timeout.md bugs/flaky-ci.md" {
		t.Errorf("bugs rows after the changes: %s", rows)
	}
}

var _ tea.Model = Model{}
