package ui

import (
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/panes/plans"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// The selected plan's preview, held by the root (uictx.Preview, which the
// Plans pane, ui/panes/plans, draws below its table and the reader full
// screen): rendered off the UI goroutine once the cursor rests.

// plansOf is m's Plans pane.
func plansOf(m *Model) *plans.Pane { return m.paneOf(plansPane).(*plans.Pane) }

// parkReasons is uictx.ParkReasons, for the readings of the board.
var parkReasons = uictx.ParkReasons

// previewMax is how much of a plan the preview renders.
const previewMax = 64 << 10

// previewDelay lets the cursor fly over plans without rendering each one.
const previewDelay = 60 * time.Millisecond

type previewDueMsg struct{ seq int }

type previewMsg struct {
	seq       int
	key, text string
	err       error
}

// renderPreviewCmd reads the plan through the engine and renders it in
// the markdown style settled before the program started, note (markdown)
// above it.
func renderPreviewCmd(t *planfs.Tree, rel, note, key, style string, width, seq int) tea.Cmd {
	return func() tea.Msg {
		text, cut, err := t.ReadPlan(rel)
		if err != nil {
			return previewMsg{seq: seq, key: key, err: err}
		}
		if len(text) > previewMax {
			// Rendering a megabyte of markdown takes seconds of CPU; the
			// head of a plan is what a preview is for.
			text = strings.ToValidUTF8(text[:previewMax], "")
			cut = true
		}
		if note != "" {
			text = note + "\n" + text
		}
		out := kit.RenderMarkdown(text, style, width)
		if cut {
			out += "\n\n(only the first 64 KiB are shown; the file is longer)"
		}
		return previewMsg{seq: seq, key: key, text: out}
	}
}

func previewKey(rel string, mtime int64, width int) string {
	return fmt.Sprintf("%s\x00%d\x00%d", rel, mtime, width)
}

// previewed shows a render, unless a newer one was asked for meanwhile.
func (m *Model) previewed(msg previewMsg) {
	pv := &m.pv
	if msg.seq != pv.Seq {
		return
	}
	pv.Key = msg.key
	if msg.err != nil {
		pv.SetContent(msg.err.Error())
	} else {
		pv.SetContent(msg.text)
	}
}

// previewShown reports whether the preview is on screen.
func (m *Model) previewShown() bool {
	if m.reading() {
		return true
	}
	_, ph := plans.Split(m.Common, m.Height-2)
	return m.pane == plansPane && ph > 0
}

func (m *Model) previewWidth() int { return max(20, m.pv.VP.Width-2) }

func (m *Model) previewWant(r *model.BoardRow) string {
	// The note (park reason, lint) can change with the plan's file unchanged.
	return previewKey(r.Plan.Rel, r.Plan.ModTime, m.previewWidth()) + "\x00" + uictx.PreviewNote(m.d, r)
}

// schedulePreview renders the selected plan once the cursor rests on it.
func (m *Model) schedulePreview() tea.Cmd {
	r := m.selectedPlan()
	if r == nil {
		if m.pv.Rel != "" {
			m.pv.Rel, m.pv.Key = "", ""
			m.pv.SetContent("")
		}
		return nil
	}
	if !m.previewShown() || m.previewWant(r) == m.pv.Key {
		return nil
	}
	m.pv.Seq++
	seq := m.pv.Seq
	if m.pv.Rel != r.Plan.Rel {
		m.pv.Rel = r.Plan.Rel
		m.pv.SetContent("")
		m.pv.VP.GotoTop()
	}
	return tea.Tick(previewDelay, func(time.Time) tea.Msg { return previewDueMsg{seq: seq} })
}

func (m *Model) fullPreview(h int) []string {
	title := "preview"
	if m.pv.Rel != "" {
		title = termtext.Line(planfs.Dir + "/" + m.pv.Rel)
	}
	head := " " + m.St.Title.Render(title) + m.St.Dim.Render("  ↑/↓ scroll · esc back")
	lines := strings.Split(m.pv.VP.View(), "\n")
	for i := range lines {
		lines[i] = " " + lines[i]
	}
	return append([]string{head, m.readerFacts()}, lines...)
}
