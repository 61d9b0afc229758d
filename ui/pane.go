package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/workers"
)

type pane int

const (
	plansPane pane = iota
	leasesPane
	worktreesPane
	workersPane
	eventsPane
	mergePane
	inboxPane
	fleetPane
	paneCount
)

// paneModel is one pane of the cockpit: it is sized, derives its rows
// from the data, answers the keys that are its own, and draws itself. What
// it offers the key map is its table's selection.
type paneModel interface {
	SetSize(w, h int)
	rebuild(c *paneCtx)
	// update answers a key the pane owns; handled is false for the rest.
	// What it asks of the root (a question, a detail, a command to run) is
	// the message it returns (paneReq).
	update(c *paneCtx, msg tea.KeyMsg) (req tea.Msg, handled bool)
	view(c *paneCtx, h int) []string
	List() *kit.Table
	// selected is what the cursor is on, for the key map and the verbs.
	selected() selection
	// syncKeys enables the pane's own keys for the selection.
	syncKeys(c *paneCtx, set setKey)
	// FilterOf is the pane's own filter (filter.go).
	FilterOf() *kit.Filter
}

// selection is what a pane offers the key map: the plan, lease or worker
// under the cursor; the rest are nil.
type selection struct {
	rel    string
	row    *model.BoardRow
	lease  *model.Lease
	worker *workerRow
}

// paneSpecs is the one list of panes: its order is the tab order and the
// number keys, its names the tabs. A new pane is one line here and its
// sub-model.
var paneSpecs = [paneCount]struct {
	name, short string // short is the name on narrow terminals
	of          func(m *Model) paneModel
}{
	{"Plans", "Plans", func(m *Model) paneModel { return &m.plans }},
	{"Leases", "Leases", func(m *Model) paneModel { return &m.leases }},
	{"Worktrees", "Trees", func(m *Model) paneModel { return &m.trees }},
	{"Workers", "Workers", func(m *Model) paneModel { return &m.wrk }},
	{"Events", "Events", func(m *Model) paneModel { return &m.events }},
	{"Merge", "Merge", func(m *Model) paneModel { return &m.merge }},
	{"Inbox", "Inbox", func(m *Model) paneModel { return &m.inbox }},
	{"Fleet", "Fleet", func(m *Model) paneModel { return &m.fleet }},
}

func (m *Model) paneOf(p pane) paneModel { return paneSpecs[p].of(m) }

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
	// detailReq opens a detail; read runs off the UI goroutine and must
	// copy what it needs (openDetail, detail.go).
	detailReq struct {
		id, title string
		read      func() func(c *paneCtx) []string
	}
	// diffReq opens a diff computed off the UI goroutine (openDiff, diff.go).
	diffReq struct {
		what, req string
		compute   func() (workers.Diff, error)
	}
	// statusReq says text in the status line.
	statusReq struct {
		text string
		err  bool
	}
	// openReq pushes an overlay as it is.
	openReq struct{ o overlay }
	// logsReq opens the logs of the marked workers, else the selected one
	// (openLogs, logs.go).
	logsReq struct{}
	// moveReq moves the shown pane's cursor (moveCursor, input.go).
	moveReq int
	// selectedReq: the pane's selection changed under the root (another
	// lane), so the keys and the preview follow it.
	selectedReq struct{}
	// readerReq opens the selected plan full screen.
	readerReq struct{}
	// newPlanReq and editReq start writing a plan (newplan.go, edit.go).
	newPlanReq struct{}
	editReq    struct{}
	// batchReq is several requests, done in order.
	batchReq []tea.Msg
)

// setKey enables a binding or not, and remembers why for its keys.
type setKey func(b *key.Binding, ok bool, why string)
