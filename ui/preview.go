package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
)

// previewMax is how much of a plan the preview renders.
const previewMax = 64 << 10

// previewDelay lets the cursor fly over plans without rendering each one.
const previewDelay = 60 * time.Millisecond

// preview is the selected plan rendered as markdown, scrollable.
type preview struct {
	vp  viewport.Model
	rel string // the plan shown, or being rendered
	key string // rel, mtime and width the shown text was rendered for
	seq int    // the latest request; older renders are dropped
	// gen counts the contents set (setContent), so a drawn box is reused
	// until the text, its scroll or its size changes: the box costs more to
	// draw than anything else on the Plans pane, and every served session
	// draws it again on each change.
	gen   int
	drawn struct {
		key   string
		lines []string
	}
}

// setContent replaces what the preview shows.
func (pv *preview) setContent(text string) {
	pv.vp.SetContent(text)
	pv.gen++
}

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
	pv := &m.plans.pv
	if msg.seq != pv.seq {
		return
	}
	pv.key = msg.key
	if msg.err != nil {
		pv.setContent(msg.err.Error())
	} else {
		pv.setContent(msg.text)
	}
}

// previewShown reports whether the preview is on screen.
func (m *Model) previewShown() bool {
	if m.reading() {
		return true
	}
	_, ph := plansSplit(m.Common, m.Height-2)
	return m.pane == plansPane && ph > 0
}

func (m *Model) previewWidth() int { return max(20, m.plans.pv.vp.Width-2) }

func (m *Model) previewWant(r *model.BoardRow) string {
	// The note (park reason, lint) can change with the plan's file unchanged.
	return previewKey(r.Plan.Rel, r.Plan.ModTime, m.previewWidth()) + "\x00" + previewNote(m.d, r)
}

// schedulePreview renders the selected plan once the cursor rests on it.
func (m *Model) schedulePreview() tea.Cmd {
	r := m.selectedPlan()
	if r == nil {
		if m.plans.pv.rel != "" {
			m.plans.pv.rel, m.plans.pv.key = "", ""
			m.plans.pv.setContent("")
		}
		return nil
	}
	if !m.previewShown() || m.previewWant(r) == m.plans.pv.key {
		return nil
	}
	m.plans.pv.seq++
	seq := m.plans.pv.seq
	if m.plans.pv.rel != r.Plan.Rel {
		m.plans.pv.rel = r.Plan.Rel
		m.plans.pv.setContent("")
		m.plans.pv.vp.GotoTop()
	}
	return tea.Tick(previewDelay, func(time.Time) tea.Msg { return previewDueMsg{seq: seq} })
}

func (m *Model) fullPreview(h int) []string {
	title := "preview"
	if m.plans.pv.rel != "" {
		title = termtext.Line(planfs.Dir + "/" + m.plans.pv.rel)
	}
	head := " " + m.St.Title.Render(title) + m.St.Dim.Render("  ↑/↓ scroll · esc back")
	lines := strings.Split(m.plans.pv.vp.View(), "\n")
	for i := range lines {
		lines[i] = " " + lines[i]
	}
	return append([]string{head, m.readerFacts()}, lines...)
}
