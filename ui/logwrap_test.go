package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// longLine is a log line far wider than any pane, its words numbered so a
// test can tell which of its rows are on screen.
func longLine() string {
	var words []string
	for i := range 40 {
		words = append(words, fmt.Sprintf("seg%02d", i))
	}
	return "2025-06-02T09:29:45.000Z out " + strings.Join(words, " ") + " TAIL-END"
}

// logHarness has mid-1's log open alone at w×h: more lines than fit, the
// last one longLine.
func logHarness(t *testing.T, w, h int) *harness {
	p := newProject(t)
	p.addWorkers(t)
	var lines []string
	for i := range 60 {
		lines = append(lines, fmt.Sprintf("2025-06-02T09:29:44.000Z out filler %02d", i))
	}
	p.log(t, "mid-1", append(lines, longLine())...)
	hs := newHarness(t, p, w, h)
	hs.selectWorker("mid-1")
	hs.press("l")
	hs.pumpLogs("mid-1's lines", func() bool { return len(hs.m.logsShown().panes[0].lines) == 66 })
	return hs
}

// paneRows is the text inside the log boxes, one string per screen row.
func (h *harness) paneRows() []string {
	var out []string
	for _, l := range strings.Split(h.view(), "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "│") {
			out = append(out, strings.TrimSpace(strings.Trim(t, "│")))
		}
	}
	return out
}

// lastRow is the pane's bottom text row that is not blank.
func (h *harness) lastRow() string {
	rows := h.paneRows()
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i] != "" {
			return rows[i]
		}
	}
	return ""
}

func TestLogSideways(t *testing.T) {
	for _, sz := range sizes {
		t.Run(fmt.Sprint(sz[0]), func(t *testing.T) {
			t.Parallel()
			h := logHarness(t, sz[0], sz[1])
			if v := h.view(); strings.Contains(v, "TAIL-END") || !strings.Contains(v, "seg00") {
				t.Fatalf("the long line is not cut at the width:\n%s", v)
			}
			h.press("right")
			if v := h.view(); !strings.Contains(v, "· →10") || strings.Contains(v, "09:29:4") || !strings.Contains(v, "seg00") {
				t.Fatalf("→ did not scroll sideways:\n%s", v)
			}
			for range 60 {
				h.press("right")
			}
			v := h.view()
			if !strings.Contains(h.lastRow(), "TAIL-END") {
				t.Fatalf("the end of the long line is not reachable:\n%s", v)
			}
			// No further than the widest line needs: its end is at the edge.
			if !strings.HasSuffix(h.lastRow(), "TAIL-END") || strings.Contains(h.footer(), "→/] ") {
				t.Errorf("scrolled past the widest line: %q", h.lastRow())
			}
			for range 60 {
				h.press("left")
			}
			if v := h.view(); strings.Contains(v, "· →") || !strings.Contains(v, "09:29:45   seg00") {
				t.Errorf("← did not come back to the start:\n%s", v)
			}
		})
	}
}

func TestLogWrap(t *testing.T) {
	for _, sz := range sizes {
		t.Run(fmt.Sprint(sz[0]), func(t *testing.T) {
			t.Parallel()
			h := logHarness(t, sz[0], sz[1])
			h.press("right", "w")
			v := h.view()
			if !strings.Contains(v, "wrap · following") || !strings.Contains(v, "seg00") || !strings.HasSuffix(h.lastRow(), "TAIL-END") || strings.Contains(v, "· →") {
				t.Fatalf("w did not wrap the long line:\n%s", v)
			}
			p := h.m.logsShown().panes[0]
			rows := len(wrapLine(p.shown[len(p.lines)-1], h.m.logTextWidth(0)))
			if rows < 2 {
				t.Fatalf("the long line wraps to %d rows", rows)
			}
			// Scrolling counts rows: one up hides the long line's last row,
			// as many as it has shows the line before it at the bottom.
			h.press("k")
			if last := h.lastRow(); strings.Contains(last, "TAIL-END") || !strings.Contains(h.view(), "seg00") {
				t.Fatalf("one row up: the bottom row is %q", last)
			}
			// New lines then leave the screen where it is.
			before := h.paneRows()
			h.update(logLinesMsg{gen: h.m.logsShown().gen, lines: []string{longLine()}})
			if after := h.paneRows(); strings.Join(after, "\n") != strings.Join(before, "\n") || !strings.Contains(h.view(), "wrap · ↑2") {
				t.Errorf("a new line moved the pane scrolled up one row:\n%s\nthen\n%s", strings.Join(before, "\n"), h.view())
			}
			for range rows - 1 {
				h.press("k")
			}
			if last := h.lastRow(); !strings.HasSuffix(last, "filler 59") {
				t.Fatalf("%d rows up: the bottom row is %q, want the line before the long one", rows, last)
			}
			// Here too, a line up.
			before = h.paneRows()
			h.update(logLinesMsg{gen: h.m.logsShown().gen, lines: []string{longLine(), longLine()}})
			if after := h.paneRows(); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Errorf("new lines moved the wrapped pane:\n%s\nthen\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
			}
			// Off again: still on the same line, now counted in lines.
			h.press("w")
			if last := h.lastRow(); !strings.HasSuffix(last, "filler 59") || strings.Contains(h.view(), "wrap · ↑") {
				t.Fatalf("unwrapped: the bottom row is %q", last)
			}
			h.press("w", "g")
			if rows := h.paneRows(); !strings.Contains(rows[0], "claimed in-progress/export-pdf.md") || !strings.Contains(h.view(), "wrap · ↑") {
				t.Errorf("g in a wrapped pane: the first row is %q", rows[0])
			}
			h.press("G")
			if !strings.HasSuffix(h.lastRow(), "TAIL-END") || !strings.Contains(h.view(), "wrap · following") {
				t.Errorf("G in a wrapped pane does not follow:\n%s", h.view())
			}
		})
	}
}

func TestLogZoom(t *testing.T) {
	for _, sz := range sizes {
		t.Run(fmt.Sprint(sz[0]), func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			p.addWorkers(t)
			h := newHarness(t, p, sz[0], sz[1])
			h.selectWorker("mid-1")
			h.press(" ")
			h.selectWorker("small-2")
			h.press(" ", "l")
			h.pumpLogs("both logs", func() bool {
				v := h.m.logsShown()
				return len(v.panes[0].lines) == 5 && len(v.panes[1].lines) == 3
			})
			if v := h.view(); !strings.Contains(v, "wrote pdf.go") || !strings.Contains(v, "looking at the importer") {
				t.Fatalf("both logs are not shown:\n%s", v)
			}
			h.press("z")
			v := h.view()
			lines := strings.Split(v, "\n")
			if !strings.Contains(v, "wrote pdf.go") || strings.Contains(v, "looking at the importer") ||
				!strings.HasPrefix(lines[1], " ┌─ mid-1") || !strings.HasSuffix(lines[1], "┐") || ansi.StringWidth(lines[1]) != sz[0] {
				t.Fatalf("z did not zoom mid-1's log to the whole screen:\n%s", v)
			}
			if got := len(h.paneRows()); got != sz[1]-4 {
				t.Errorf("the zoomed pane has %d rows, want %d", got, sz[1]-4)
			}
			h.press("tab")
			if v := h.view(); strings.Contains(v, "wrote pdf.go") || !strings.Contains(v, "looking at the importer") {
				t.Fatalf("tab while zoomed does not show the other log:\n%s", v)
			}
			h.press("z")
			if v := h.view(); !strings.Contains(v, "wrote pdf.go") || !strings.Contains(v, "looking at the importer") {
				t.Fatalf("z again does not show both logs:\n%s", v)
			}
		})
	}
}

// BenchmarkLogFloodWrapped is BenchmarkLogFlood with wrapping on, following
// and scrolled up (where each new line's rows are counted to keep the
// screen still).
func BenchmarkLogFloodWrapped(b *testing.B) {
	for _, up := range []bool{false, true} {
		b.Run(fmt.Sprintf("scrolled=%v", up), func(b *testing.B) {
			h := logFloodHarness(b)
			batch := logFloodBatch()
			h.press("w")
			h.update(logLinesMsg{gen: h.m.logsShown().gen, lines: batch})
			if up {
				h.press("k")
			}
			b.ResetTimer()
			for range b.N {
				h.update(logLinesMsg{gen: h.m.logsShown().gen, lines: batch})
				_ = h.m.View()
			}
		})
	}
}
