package ui

// Review findings for the Workers pane, the spawn form, stop and the log
// panes. Each test fails on the code as reviewed and passes once the
// problem is fixed.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"fleetwatch/workers"
)

// A FIFO among the state files (a stray mkfifo, a tool that streams its
// state) blocked the one reading of the state files in open(2): the
// Workers pane never refreshed again for the life of the UI, even after
// the FIFO was gone, and s never opened its form.
func TestReviewFIFOStateFileDoesNotFreezeTheWorkersPane(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addWorkers(t)
	if err := syscall.Mkfifo(filepath.Join(p.dir, filepath.FromSlash(workers.StateDir), "pipe.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := p.options()
	opt.Self = "/usr/local/bin/fleetwatch"  // never run: the form only opens
	h := newHarnessWith(t, p, opt, 120, 32) // fails "did not settle" while a reading blocks
	h.press("4")
	if got := h.workerAgents(); len(got) != 5 {
		t.Errorf("workers %v", got)
	}
	h.press("5")
	if v := h.view(); !strings.Contains(v, "pipe.json: not a regular file") {
		t.Errorf("the Events pane does not name the FIFO:\n%s", v)
	}
	h.press("4", "s")
	if h.m.formShown() == nil {
		t.Errorf("s did not open the spawn form:\n%s", h.view())
	}
}

// A log pane rendered every line as it arrived, styles and all, on the UI
// goroutine: a chatty agent's batch of 10,000 lines (what a tail hands
// over at once) took about 30 ms in colour, two frames in which no key
// was read. Only the lines on screen are drawn now; BenchmarkLogFlood
// measures it. This test checks the pane still shows the right ones.
func TestReviewLogFloodShowsTheNewestLines(t *testing.T) {
	t.Parallel()
	h := logFloodHarness(t)
	batch := logFloodBatch()
	for range 3 {
		h.update(logLinesMsg{gen: h.m.logsShown().gen, lines: batch})
		_ = h.m.View()
	}
	if v := ansi.Strip(h.m.View()); !strings.Contains(v, "09:29:39   step 9999 of the build") || strings.Contains(v, "step 9950 ") {
		t.Errorf("the pane does not end on the newest line:\n%s", v)
	}
	h.press("g")
	if v := ansi.Strip(h.m.View()); !strings.Contains(v, "step 5000 of the build") {
		t.Errorf("g: the oldest line kept is not on screen:\n%s", v)
	}
}

// logFloodHarness has mid-1's log open in colour at 160×48.
func logFloodHarness(t testing.TB) *harness {
	p := newProject(t)
	p.addWorkers(t)
	opt := p.options()
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	opt.Renderer = r
	h := newHarnessWith(t, p, opt, 160, 48)
	h.selectWorker("mid-1")
	h.press("l")
	h.pumpLogs("the pane opened", func() bool { return h.m.logsShown().panes[0].open })
	return h
}

func logFloodBatch() []string {
	batch := make([]string, 10000)
	for i := range batch {
		batch[i] = fmt.Sprintf("2025-06-02T09:29:%02d.000Z out step %d of the build: compiling package number %d", i%60, i, i)
	}
	return batch
}

// Bubble Tea hands keys that arrive in one read as one message with
// several runes: over SSH, or with a key held down, "jj" came as one key
// that matched nothing and was dropped (tmux send-keys j j shows it).
// Outside a text field each rune is a key.
func TestReviewKeysThatArriveTogetherAreEachPressed(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addWorkers(t)
	h := newHarness(t, p, 120, 32)
	h.selectWorker(h.workerAgents()[0])
	h.send(keyMsg("jjl"))
	if h.m.logsShown() == nil || h.m.logsShown().panes[0].agent != h.workerAgents()[2] {
		t.Fatalf("jjl in one read: cursor %d, logs open %v", h.m.wrk.cursor, h.m.logsShown() != nil)
	}
	h.pumpLogs("the pane opened", func() bool { return h.m.logsShown().panes[0].open })
	h.press("esc", "1", "/")
	h.send(keyMsg("crash"))
	if got := h.m.plans.filter.Value(); got != "crash" {
		t.Errorf("typed into the filter in one read: %q", got)
	}
}

// When endpoints.yaml cannot be read, the form's warning began with the
// file's absolute path, so the box cut it before the reason: at 80×24
// the operator read "⚠ /home/…/endpoints.yaml:1…" and never what was
// wrong.
func TestReviewSpawnFormSaysWhatIsWrongWithTheRegistry(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	if err := os.WriteFile(filepath.Join(p.dir, "endpoints.yaml"), []byte("endpoints:\n  - name: [broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := p.options()
	opt.Self = "/usr/local/bin/fleetwatch" // never run: the form is only drawn
	h := newHarnessWith(t, p, opt, 80, 24)
	h.press("4", "s")
	v := h.view() // fails on the temp path
	if !strings.Contains(strings.Join(strings.Fields(v), " "), "endpoints.yaml:1: did not find expected") {
		t.Errorf("the form does not say what is wrong with endpoints.yaml:\n%s", v)
	}
}

// A log that cannot be followed says why in its pane, in words that fit:
// the error began with the log's absolute path, which filled the pane's
// width before the reason.
func TestReviewLogPaneSaysWhyItCannotFollow(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addWorkers(t)
	path := workers.LogPath(p.dir, "small-3")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, p, 80, 24)
	h.selectWorker("small-3")
	h.press("l")
	h.pumpLogs("the pane opened", func() bool { return h.m.logsShown().panes[0].open })
	if v := h.view(); !strings.Contains(v, "✗ cannot follow var/fleet/logs/small-3.log: not a regular file") {
		t.Errorf("the pane does not say why:\n%s", v)
	}
}

func TestLogStampShowsTheDayOfOldLines(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.Local)
	if got := logStamp(now.Add(-time.Hour), now); got != "08:00:00" {
		t.Errorf("today: %q", got)
	}
	if got := logStamp(now.Add(-48*time.Hour), now); got != "  Nov 28" {
		t.Errorf("two days ago: %q", got)
	}
}

func TestNatCompareCountsLikePeople(t *testing.T) {
	ids := []string{"ui-mid-10", "ui-mid-2", "mid-1", "ui-mid-02x", "ui-mid-2", "ui-mid-1", "ui-small-1", "a"}
	slices.SortFunc(ids, natCompare)
	want := []string{"a", "mid-1", "ui-mid-1", "ui-mid-2", "ui-mid-2", "ui-mid-02x", "ui-mid-10", "ui-small-1"}
	if !slices.Equal(ids, want) {
		t.Errorf("got %q, want %q", ids, want)
	}
}
