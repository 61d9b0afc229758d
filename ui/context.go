package ui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/lipgloss"

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
	st    Styles
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
	lines     func(t *table, blank string) []string
	highlight func(line string) string
}

// ctx is the context the panes are given now.
func (m *Model) ctx() *paneCtx {
	return &paneCtx{
		common: m.common, d: m.d, shown: m.pane, target: m.selection(), remote: m.remote,
		stateProblems: m.wrk.problems, workers: m.wrk.rows, paused: m.fleet.data.paused, queue: &m.merge, reading: m.reading(),
		lines:     func(t *table, blank string) []string { return t.lines(m.common, blank) },
		highlight: m.highlight,
	}
}
