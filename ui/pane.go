package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/workers"
)

type PaneID int

const (
	plansPane PaneID = iota
	leasesPane
	worktreesPane
	workersPane
	eventsPane
	mergePane
	inboxPane
	fleetPane
	paneCount
)

// Pane is one pane of the cockpit: it is sized, derives its rows
// from the data, answers the keys that are its own, and draws itself. What
// it offers the key map is its table's selection.
type Pane interface {
	SetSize(w, h int)
	Rebuild(c *Ctx)
	// Update answers a key the pane owns; handled is false for the rest.
	// What it asks of the root (a question, a detail, a command to run) is
	// the message it returns (paneReq).
	Update(c *Ctx, msg tea.KeyMsg) (req tea.Msg, handled bool)
	View(c *Ctx, h int) []string
	List() *kit.Table
	// Selected is what the cursor is on, for the key map and the verbs.
	Selected() Selection
	// SyncKeys enables the pane's own keys for the selection.
	SyncKeys(c *Ctx, set SetKey)
	// FilterOf is the pane's own filter (filter.go).
	FilterOf() *kit.Filter
}

// Selection is what a pane offers the key map: the plan or lease under
// the cursor; the rest are nil.
type Selection struct {
	Rel   string
	Row   *model.BoardRow
	Lease *model.Lease
}

// paneSpecs is the one list of panes: its order is the tab order and the
// number keys, its names the tabs. A new pane is one line here and its
// sub-model.
var paneSpecs = [paneCount]struct {
	name, short string // short is the name on narrow terminals
	of          func(m *Model) Pane
}{
	{"Plans", "Plans", func(m *Model) Pane { return &m.plans }},
	{"Leases", "Leases", func(m *Model) Pane { return &m.leases }},
	{"Worktrees", "Trees", func(m *Model) Pane { return &m.trees }},
	{"Workers", "Workers", func(m *Model) Pane { return &m.wrk }},
	{"Events", "Events", func(m *Model) Pane { return &m.events }},
	{"Merge", "Merge", func(m *Model) Pane { return &m.merge }},
	{"Inbox", "Inbox", func(m *Model) Pane { return &m.inbox }},
	{"Fleet", "Fleet", func(m *Model) Pane { return &m.fleet }},
}

func (m *Model) paneOf(p PaneID) Pane { return paneSpecs[p].of(m) }

// What a pane asks of the root, returned from its update for route (ui.go)
// to do at once: a tea.Cmd is run as it is; the rest open an overlay or
// say something, which only the root may.
type (
	// askReq asks a question about rel (ask, dialog.go); with verb set,
	// its action goes through the remote backend in a remote project
	// (remoteOr), else it is local.
	askReq struct {
		d     *dialog
		rel   string
		lease *model.Lease
		verb  model.Verb
		local func(model.Lane, string) tea.Cmd
	}
	// DetailReq opens a detail; read runs off the UI goroutine and must
	// copy what it needs (openDetail, detail.go).
	DetailReq struct {
		ID, Title string
		Read      func() func(c *Ctx) []string
	}
	// DiffReq opens a diff computed off the UI goroutine (openDiff, diff.go).
	DiffReq struct {
		What, Req string
		Compute   func() (workers.Diff, error)
	}
	// StatusReq says text in the status line.
	StatusReq struct {
		Text string
		Err  bool
	}
	// openReq pushes an overlay as it is.
	openReq struct{ o overlay }
	// LogsReq opens the logs of the marked workers, else the selected one
	// (openLogs, logs.go).
	LogsReq struct{}
	// MoveReq moves the shown pane's cursor (moveCursor, input.go).
	MoveReq int
	// SelectedReq: the pane's selection changed under the root (another
	// lane), so the keys and the preview follow it.
	SelectedReq struct{}
	// ReaderReq opens the selected plan full screen.
	ReaderReq struct{}
	// NewPlanReq and editReq start writing a plan (newplan.go, edit.go).
	NewPlanReq struct{}
	EditReq    struct{}
	// BatchReq is several requests, done in order.
	BatchReq []tea.Msg
)

// SetKey enables a binding or not, and remembers why for its keys.
type SetKey func(b *key.Binding, ok bool, why string)
