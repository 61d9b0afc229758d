package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/glamour/ansi"
	"github.com/charmbracelet/glamour/styles"

	"fleetwatch/internal/termtext"
	"fleetwatch/planfs"
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
}

type previewDueMsg struct{ seq int }

type previewMsg struct {
	seq       int
	key, text string
	err       error
}

// renderPreviewCmd reads the plan through the engine and renders it with
// the glamour style settled before the program started, note (markdown)
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
		out := renderMarkdown(text, style, width)
		if cut {
			out += "\n\n(only the first 64 KiB are shown; the file is longer)"
		}
		return previewMsg{seq: seq, key: key, text: out}
	}
}

// renderMarkdown renders text (made safe for the terminal first) with the
// glamour style settled before the program started, wrapped at width; the
// source itself when glamour cannot render it.
func renderMarkdown(text, style string, width int) string {
	text = termtext.Block(text)
	r, err := glamour.NewTermRenderer(glamour.WithStyles(previewStyle(style)), glamour.WithWordWrap(max(20, width)))
	if err != nil {
		return text
	}
	out, err := r.Render(text)
	if err != nil {
		// Show the source rather than nothing.
		out = text
	}
	return strings.Trim(out, "\n")
}

// previewStyle is glamour's standard style of that name, with inline code
// marked by colour alone: a background block inside a bordered pane is noise.
func previewStyle(name string) ansi.StyleConfig {
	var cfg ansi.StyleConfig
	switch name {
	case styles.DarkStyle:
		cfg = styles.DarkStyleConfig
	case styles.LightStyle:
		cfg = styles.LightStyleConfig
	case styles.AsciiStyle:
		return styles.ASCIIStyleConfig
	default:
		return styles.NoTTYStyleConfig
	}
	cfg.Code.BackgroundColor = nil
	cfg.Code.Prefix, cfg.Code.Suffix = "", ""
	return cfg
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
		pv.vp.SetContent(msg.err.Error())
	} else {
		pv.vp.SetContent(msg.text)
	}
}
