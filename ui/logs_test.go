package ui

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// A log pane rendered every line as it arrived, styles and all, on the UI
// goroutine: a chatty agent's batch of 10,000 lines (what a tail hands
// over at once) took about 30 ms in colour, two frames in which no key
// was read. Only the lines on screen are drawn now; BenchmarkLogFlood
// measures it. This test checks the pane still shows the right ones.
func TestLogFloodShowsTheNewestLines(t *testing.T) {
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

// A log that cannot be followed says why in its pane, in words that fit:
// the error began with the log's absolute path, which filled the pane's
// width before the reason.
func TestLogPaneSaysWhyItCannotFollow(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addWorkers(t)
	path := look.LogPath(p.dir, "small-3")
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
	t.Parallel()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.Local)
	if got := uictx.LogStamp(now.Add(-time.Hour), now); got != "08:00:00" {
		t.Errorf("today: %q", got)
	}
	if got := uictx.LogStamp(now.Add(-48*time.Hour), now); got != "  Nov 28" {
		t.Errorf("two days ago: %q", got)
	}
}
