package ui

import (
	"math"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/lipgloss"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/workers"
)

// common is the context every pane and overlay shares, as soft-serve's
// common.Common: the options, the renderer the styles are made from (one
// per SSH session), the key map, the sizes and the clock. Panes read it
// instead of globals.
type common struct {
	Opt   Options
	R     *lipgloss.Renderer
	Keys  KeyMap
	St    kit.Styles
	Help  help.Model
	Plain bool   // no colour at all: skip styling work
	InkOn string // the escape code that sets the Text colour
	RowOn string // the escape code that starts the SelectedRow style
	Why   map[string]string
	// Off is why each binding that is Off does not apply now, for `?`.
	Off map[*key.Binding]string

	Width, Height int
	Cols          int // the body's width: one column is kept as a left margin
	Wide          bool
	Now           float64 // the clock the rows were judged at, Unix seconds

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

// TextField is a text field styled by the session's renderer rather than
// the process's default one, so each SSH session gets its own profile.
func (c *common) TextField() textinput.Model {
	in := textinput.New()
	s := c.R.NewStyle
	in.PromptStyle, in.TextStyle = s(), s()
	in.PlaceholderStyle = s().Foreground(lipgloss.Color("240"))
	in.CompletionStyle = in.PlaceholderStyle
	in.Cursor.Style, in.Cursor.TextStyle = s(), s()
	return in
}

// Ctx is what a pane sees, and all it sees: the shared context, the
// latest reading, which pane is on screen and what is selected there, and
// the few facts of the root a pane reads. A pane never holds the root
// model: it asks for anything else (a question, a detail, a reload, a
// status line) by returning a request (pane.go), which the root routes in
// one place (route, ui.go). Built afresh for each call, never kept.
type Ctx struct {
	*common
	D      *Data     // the latest reading; nil before the first
	Shown  PaneID    // the pane on screen
	Target Selection // what the shown pane's cursor is on
	// Claims is the remote claims backend and View its last good read;
	// both nil for the local lease files (View also before the first read).
	Claims *claims.Opened
	View   *claims.View
	// StateProblems are the workers' state files that could not be read,
	// which the Events pane lists.
	StateProblems []string
	// Paused are the runs paused where they are, from the Fleet pane's
	// reading, which the Inbox lists.
	Paused []workers.State
	// Reading: the selected plan is open full screen (the reader).
	Reading bool
}

// Rows are a table's visible rows, drawn in this session's context.
func (c *Ctx) Rows(t *kit.Table, blank string) []string { return t.Lines(c.common, blank) }

// ctx is the context the panes are given now.
func (m *Model) ctx() *Ctx {
	c := &Ctx{
		common: m.common, D: m.d, Shown: m.pane, Target: m.selection(),
		StateProblems: m.wrk.problems, Paused: m.fleet.data.paused, Reading: m.reading(),
	}
	if m.remote != nil {
		c.Claims, c.View = m.remote.c, m.remote.view
	}
	return c
}

// Highlight marks a selected line without hiding the colours inside it:
// a background renewed after every reset inside; with no colour at all
// (NO_COLOR, the Ascii profile drops every style) reverse video, written
// directly, so the selection is more than the ▸ in its gutter.
func (c *common) Highlight(line string) string {
	if c.Plain || c.RowOn == "" {
		return ReverseOn + line + ReverseOff
	}
	return c.RowOn + strings.ReplaceAll(line, "\x1b[0m", "\x1b[0m"+c.RowOn) + "\x1b[0m"
}

// The escape codes of reverse video, on and off.
const ReverseOn, ReverseOff = "\x1b[7m", "\x1b[27m"

// rowsOf is what the plans' and the leases' rows are made of, their
// rowsKey.from: the pane, the board, the lane, the filter and the columns
// (a comparable struct of the pane's own).
type rowsOf struct {
	pane   PaneID
	d      *Data
	lane   model.Lane
	needle string
	cols   any
}

// clockNow is the clock a tick judges the rows at. A hub's sessions take
// it to the whole second, so the sessions that tick within one second
// render that second's rows alike, once between them.
func (m *Model) clockNow() float64 {
	now := m.Opt.Tree.NowSeconds()
	if m.sub != nil {
		return math.Floor(now)
	}
	return now
}

// Sharing is lineEnv's: a hub's sessions share the rows they render alike.
func (c *common) Sharing(from any, width int) (*kit.RowCache, kit.RowsKey) {
	if c.Opt.Hub == nil {
		return nil, kit.RowsKey{}
	}
	return c.Opt.Hub.rows, kit.RowsKey{From: from, Width: width, Profile: c.R.ColorProfile(), Dark: c.R.HasDarkBackground(), Now: c.Now}
}

// Fitted is fit(s, w), measured once for a hub's sessions.
func (m *common) Fitted(s string, w int) string {
	if m.Opt.Hub == nil {
		return kit.Fit(s, w)
	}
	return m.Opt.Hub.lines.Get(kit.LineKey{S: s, W: w}, func() string { return kit.Fit(s, w) })
}

// bodyLine is a body line as View draws it: after the margin, fitted to
// the body and inked; laid out once for a hub's sessions.
func (m *Model) bodyLine(line string) string {
	lay := func() string { return m.Ink(" " + kit.Fit(line, m.Cols)) }
	if m.Opt.Hub == nil {
		return lay()
	}
	return m.Opt.Hub.lines.Get(kit.LineKey{S: line, W: m.Cols, Body: true, Ink: m.InkOn}, lay)
}
