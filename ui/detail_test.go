package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// sizes are the two terminals every detail is checked at.
var sizes = [][2]int{{80, 24}, {160, 48}}

// readDetail pages through the open detail from its top and returns every
// screen's body rows, joined: the whole text as the operator reads it.
func (h *harness) readDetail() string {
	h.t.Helper()
	if _, ok := find[*detailView](h.m.stack); !ok {
		h.t.Fatalf("no detail open:\n%s", h.view())
	}
	h.press("g")
	var all []string
	prev := ""
	for range 200 {
		v := h.view()
		if v == prev {
			return strings.Join(all, "\n")
		}
		lines := strings.Split(v, "\n")
		all = append(all, lines[2:len(lines)-1]...)
		prev = v
		h.press("pgdown")
	}
	h.t.Fatal("the detail did not end after 200 pages")
	return ""
}

// closeDetail closes the detail with key and checks the panes are back.
func (h *harness) closeDetail(key string) {
	h.t.Helper()
	h.press(key)
	if _, ok := find[*detailView](h.m.stack); ok {
		h.t.Fatalf("%s did not close the detail", key)
	}
}

func wantAll(t *testing.T, what, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s: %q missing from:\n%s", what, w, text)
		}
	}
}

// selectLease puts the Leases pane's cursor on rel's lease.
func (h *harness) selectLease(rel string) {
	h.t.Helper()
	h.press("2")
	if !leasesOf(&h.m).GoTo(model.LeaseFileName(rel)) {
		h.t.Fatalf("no lease for %s", rel)
	}
	h.m.syncKeys()
}

func TestDetailLease(t *testing.T) {
	for _, sz := range sizes {
		t.Run(fmt.Sprint(sz[0]), func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			// A field fleetwatch does not know, as another tool might add.
			file := filepath.Join(p.tree.Plans, ".leases", model.LeaseFileName("in-progress/export-pdf.md"))
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			raw = []byte(strings.Replace(string(raw), "{", `{"session": "tmux-3",`, 1))
			if err := os.WriteFile(file, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			l := p.leaseOf("in-progress/export-pdf.md")
			h := newHarness(t, p, sz[0], sz[1])
			h.selectLease("in-progress/export-pdf.md")
			h.press("enter")
			if f := h.footer(); !strings.Contains(f, "esc/enter close") || strings.Contains(f, "release") {
				t.Errorf("the footer offers keys the detail does not take: %q", f)
			}
			text := h.readDetail()
			wantAll(t, "live lease", text, ".plans/.leases/in-progress__export-pdf.md.json", "active, 50m00s left",
				"agent_id        mid-1", "claimed_at      1748856000 · 2025-06-02 09:20:00 UTC · 10m00s ago",
				"expires_at      1748859600 · 2025-06-02 10:20:00 UTC · in 50m00s", "token           "+l.Token,
				"origin          features/export-pdf.md", "Other fields", `session         "tmux-3"`,
				"On disk", `"session": "tmux-3",`, `"agent_id": "mid-1"`)
			h.closeDetail("esc")

			h.selectLease("in-progress/old-import.md")
			h.press("enter")
			wantAll(t, "expired lease", h.readDetail(), "EXPIRED 1h00m ago", "agent_id        small-2")
			h.closeDetail("enter")
		})
	}
}

// A lease that is no JSON shows its bytes as they are on disk, an escape
// sequence in them made harmless.
func TestDetailCorruptLease(t *testing.T) {
	for _, sz := range sizes {
		t.Run(fmt.Sprint(sz[0]), func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			file := filepath.Join(p.tree.Plans, ".leases", model.LeaseFileName("in-progress/old-import.md"))
			if err := os.WriteFile(file, []byte("{\"plan\": \"in-progress/old-import.md\", \"agent_\x1b[2J"), 0o644); err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, p, sz[0], sz[1])
			h.selectLease("in-progress/old-import.md")
			h.press("enter")
			text := h.readDetail()
			wantAll(t, "corrupt lease", text, "UNREADABLE", "modified", "not valid JSON; the bytes as they are:",
				`{"plan": "in-progress/old-import.md", "agent_?[2J`)
			if strings.Contains(text, "Anchor's fields") {
				t.Errorf("a corrupt lease shows parsed fields:\n%s", text)
			}
			h.closeDetail("q")
		})
	}
}

func TestDetailWorktree(t *testing.T) {
	for _, sz := range sizes {
		t.Run(fmt.Sprint(sz[0]), func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			p.addWorktrees(t)
			h := newHarness(t, p, sz[0], sz[1])
			h.press("3")
			if !treesOf(&h.m).GoTo("mid-1") {
				t.Fatalf("no worktree row for mid-1: %v", treesOf(&h.m).Keys)
			}
			h.m.syncKeys()
			h.press("enter")
			text := h.readDetail()
			wantAll(t, "mid-1's worktree", text, "path            var/worktrees/mid-1", "branch          feature/export-pdf",
				"port            47213", "ahead/behind    1 ahead, 0 behind dev", "git status --short --branch",
				"## feature/export-pdf", "git log --oneline -n 10", "pdf: start")
			h.closeDetail("esc")

			h.press("j", "enter")
			wantAll(t, "small-2's worktree", h.readDetail(), "port            none", "?? scratch.txt")
		})
	}
}

func TestDetailWorker(t *testing.T) {
	for _, sz := range sizes {
		t.Run(fmt.Sprint(sz[0]), func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			p.addWorkers(t)
			var many []string
			for i := 1; i <= 250; i++ {
				many = append(many, fmt.Sprintf("2025-06-02T09:29:50.000Z out line %03d", i))
			}
			p.log(t, "mid-1", many...)
			h := newHarness(t, p, sz[0], sz[1])
			h.selectWorker("mid-1")
			h.press("enter")
			text := h.readDetail()
			wantAll(t, "mid-1", text, "var/fleet/workers/mid-1.json", "pid             4123", "model           qwen3-32b",
				"plan            in-progress/export-pdf.md", "last_heartbeat", "20s ago", "heartbeat_every 30 s",
				"Note", "running the executor", "On disk", `"model": "qwen3-32b",`,
				"Log · last 200 lines · var/fleet/logs/mid-1.log", "09:29:50   line 250")
			// The log's five earlier lines and the first 50 of the 250 are
			// before the last 200.
			if strings.Contains(text, "line 050") || !strings.Contains(text, "line 051") {
				t.Errorf("not the last 200 log lines:\n%s", text)
			}
			h.closeDetail("esc")
		})
	}
}

// An event's reason is shown whole, however long, wrapped to the width.
func TestDetailEventLongReason(t *testing.T) {
	var words []string
	for i := 0; len(strings.Join(words, " ")) < 2000; i++ {
		words = append(words, fmt.Sprintf("w%04d", i))
	}
	reason := strings.Join(words, " ")
	for _, sz := range sizes {
		t.Run(fmt.Sprint(sz[0]), func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			p.tree.LogEvent(planfs.Event{Event: "parked", Slug: "improve-perf", From: "features", To: "ambiguous",
				AgentID: "mid-2", Reason: reason})
			h := newHarness(t, p, sz[0], sz[1])
			h.press("5")
			i := 0
			for i < eventsOf(&h.m).Len() && (eventsOf(&h.m).EventAt(i) == nil || eventsOf(&h.m).EventAt(i).Reason != reason) {
				i++
			}
			eventsOf(&h.m).Cursor = i
			h.m.syncKeys()
			h.press("enter")
			text := h.readDetail()
			wantAll(t, "event", text, "event           parked", "slug            improve-perf", "from            features",
				"to              ambiguous", "agent_id        mid-2", "2025-06-02 09:30:00 UTC", "Reason")
			wantAll(t, "reason", text, words...)
			h.closeDetail("esc")

			// A scan warning opens the same way.
			h.press("g", "enter")
			wantAll(t, "warning", h.readDetail(), "Warning", "Message")
		})
	}
}

// The reader names the plan's file, its lane and who holds it.
func TestDetailReaderFacts(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	for _, sz := range sizes {
		h := newHarness(t, p, sz[0], sz[1])
		h.selectPlan("in-progress/export-pdf.md")
		h.press("enter")
		v := h.view()
		if !strings.Contains(v, ".plans/in-progress/export-pdf.md  ↑/↓ scroll") ||
			!strings.Contains(v, "lane in-progress · held by mid-1, 50m00s left") || !strings.Contains(v, "# Export a note as PDF") {
			t.Errorf("%d: the reader does not say where the plan is and who holds it:\n%s", sz[0], v)
		}
	}
}

// enter on an empty pane says why nothing opens.
func TestDetailNeedsASelection(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.press("3", "enter")
	if _, ok := find[*detailView](h.m.stack); ok || !strings.Contains(h.footer(), "open: select a worktree") {
		t.Errorf("enter on no worktree: %q", h.footer())
	}
}

// TestGoldenDetails runs the real program (teatest) and opens a worker, a
// worktree and an event with enter; their screens are golden files like
// TestGoldenScreens' (`go test ./ui -run TestGoldenDetails -update`). A
// lease's detail holds a random token and the test's pid, so it is
// checked by TestDetailLease instead.
func TestGoldenDetails(t *testing.T) {
	t.Parallel()
	screens := []struct {
		name string
		keys []string
		// pane is text the pane shows before enter; want the detail's.
		pane, want string
	}{
		{"worker", []string{"4"}, "◌ stale", "note            running the executor"},
		{"worktree", []string{"3"}, "var/worktrees/small-2", "1 ahead, 0 behind dev"},
		{"event", []string{"5", "G"}, "needs SMTP credentials", "event           create"},
	}
	for _, size := range sizes {
		w, h := size[0], size[1]
		for _, sc := range screens {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, w, h), func(t *testing.T) {
				t.Parallel()
				p := newProject(t)
				p.addWorktrees(t)
				p.addWorkers(t)
				tm := teatest.NewTestModel(t, New(p.options()), teatest.WithInitialTermSize(w, h))
				first := []string{"crash-on-save"}
				if w >= 100 {
					first = append(first, "3 workers") // at 80 the header has no room for them
				}
				waitFor(t, tm, first)
				sendKeys(sc.keys...)(tm)
				waitFor(t, tm, []string{sc.pane})
				sendKeys("enter")(tm)
				waitFor(t, tm, []string{sc.want})
				if err := tm.Quit(); err != nil {
					t.Fatal(err)
				}
				final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
				final.Close()
				v := final.View()
				checkScreen(t, v, w, h, p)
				teatest.RequireEqualOutput(t, []byte(v))
			})
		}
	}
}
