package ui

import (
	"math"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/lipgloss"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/workers"
)

// common is the context every pane and overlay shares, as soft-serve's
// common.Common: the options, the renderer the styles are made from (one
// per SSH session), the key map, the sizes and the clock. Panes read it
// instead of globals.
type common struct {
	opt   Options
	r     *lipgloss.Renderer
	keys  KeyMap
	st    kit.Styles
	help  help.Model
	plain bool   // no colour at all: skip styling work
	inkOn string // the escape code that sets the Text colour
	rowOn string // the escape code that starts the SelectedRow style
	why   map[string]string
	// off is why each binding that is off does not apply now, for `?`.
	off map[*key.Binding]string

	width, height int
	cols          int // the body's width: one column is kept as a left margin
	wide          bool
	now           float64 // the clock the rows were judged at, Unix seconds

	// statusSeq counts status messages, so a fade clears only its own;
	// holdStatus keeps them (tests that read the status after settling).
	statusSeq  int
	holdStatus bool
	// hinted: a key was pressed, so the demo's hint is gone.
	hinted bool

	// several: this is one project of a cockpit over several, whose help
	// lists the keys between them; away is the header's word on the other
	// projects' unread notices (projects.go).
	several bool
	away    string

	tabsDrawn [tabLevels]tabsMemo // the header's tabs at each level (view.go)
	helpDrawn [2]helpMemo         // the footer's keys, alone and beside a status (view.go)
}

// textField is a text field styled by the session's renderer rather than
// the process's default one, so each SSH session gets its own profile.
func (c *common) textField() textinput.Model {
	in := textinput.New()
	s := c.r.NewStyle
	in.PromptStyle, in.TextStyle = s(), s()
	in.PlaceholderStyle = s().Foreground(lipgloss.Color("240"))
	in.CompletionStyle = in.PlaceholderStyle
	in.Cursor.Style, in.Cursor.TextStyle = s(), s()
	return in
}

// paneCtx is what a pane sees, and all it sees: the shared context, the
// latest reading, which pane is on screen and what is selected there, and
// the few facts of the root a pane reads. A pane never holds the root
// model: it asks for anything else (a question, a detail, a reload, a
// status line) by returning a request (pane.go), which the root routes in
// one place (route, ui.go). Built afresh for each call, never kept.
type paneCtx struct {
	*common
	d      *data        // the latest reading; nil before the first
	shown  pane         // the pane on screen
	target selection    // what the shown pane's cursor is on
	remote *remoteState // the remote claims backend, read only; nil for lease files
	// stateProblems are the workers' state files that could not be read,
	// which the Events pane lists.
	stateProblems []string
	// workers are the Workers pane's rows, whose running runs' spend the
	// Fleet pane lists; paused the runs paused where they are, from the
	// Fleet pane's reading, which the Inbox lists.
	workers []workerRow
	paused  []workers.State
	// queue is the merge listing: the Plans pane's merge keys act on the
	// selected plan's candidate in it (merge.go).
	queue *mergeList
	// reading: the selected plan is open full screen (the reader).
	reading bool
	// lines and highlight draw a table's visible rows and a selected
	// line; table.go renders rows for the root model, so these are its.
	lines     func(t *kit.Table, blank string) []string
	highlight func(line string) string
}

// ctx is the context the panes are given now.
func (m *Model) ctx() *paneCtx {
	return &paneCtx{
		common: m.common, d: m.d, shown: m.pane, target: m.selection(), remote: m.remote,
		stateProblems: m.wrk.problems, workers: m.wrk.rows, paused: m.fleet.data.paused, queue: &m.merge, reading: m.reading(),
		lines:     func(t *kit.Table, blank string) []string { return t.Lines(m.common, blank) },
		highlight: m.Highlight,
	}
}

// Highlight marks a selected line without hiding the colours inside it:
// a background renewed after every reset inside; with no colour at all
// (NO_COLOR, the Ascii profile drops every style) reverse video, written
// directly, so the selection is more than the ▸ in its gutter.
func (c *common) Highlight(line string) string {
	if c.plain || c.rowOn == "" {
		return reverseOn + line + reverseOff
	}
	return c.rowOn + strings.ReplaceAll(line, "\x1b[0m", "\x1b[0m"+c.rowOn) + "\x1b[0m"
}

// The escape codes of reverse video, on and off.
const reverseOn, reverseOff = "\x1b[7m", "\x1b[27m"

// rowsOf is what the plans' and the leases' rows are made of, their
// rowsKey.from: the pane, the board, the lane, the filter and the columns
// (a comparable struct of the pane's own).
type rowsOf struct {
	pane   pane
	d      *data
	lane   model.Lane
	needle string
	cols   any
}

// clockNow is the clock a tick judges the rows at. A hub's sessions take
// it to the whole second, so the sessions that tick within one second
// render that second's rows alike, once between them.
func (m *Model) clockNow() float64 {
	now := m.opt.Tree.NowSeconds()
	if m.sub != nil {
		return math.Floor(now)
	}
	return now
}

// Sharing is lineEnv's: a hub's sessions share the rows they render alike.
func (c *common) Sharing(from any, width int) (*kit.RowCache, kit.RowsKey) {
	if c.opt.Hub == nil {
		return nil, kit.RowsKey{}
	}
	return c.opt.Hub.rows, kit.RowsKey{From: from, Width: width, Profile: c.r.ColorProfile(), Dark: c.r.HasDarkBackground(), Now: c.now}
}

// fitted is fit(s, w), measured once for a hub's sessions.
func (m *common) fitted(s string, w int) string {
	if m.opt.Hub == nil {
		return kit.Fit(s, w)
	}
	return m.opt.Hub.lines.Get(kit.LineKey{S: s, W: w}, func() string { return kit.Fit(s, w) })
}

// bodyLine is a body line as View draws it: after the margin, fitted to
// the body and inked; laid out once for a hub's sessions.
func (m *Model) bodyLine(line string) string {
	lay := func() string { return m.ink(" " + kit.Fit(line, m.cols)) }
	if m.opt.Hub == nil {
		return lay()
	}
	return m.opt.Hub.lines.Get(kit.LineKey{S: line, W: m.cols, Body: true, Ink: m.inkOn}, lay)
}
