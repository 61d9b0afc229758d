package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

const (
	plansPane uictx.PaneID = iota
	leasesPane
	worktreesPane
	workersPane
	eventsPane
	mergePane
	inboxPane
	fleetPane
	paneCount
)

// paneSpecs is the one list of panes: its order is the tab order and the
// number keys, its names the tabs. A new pane is one line here and its
// sub-model.
var paneSpecs = [paneCount]struct {
	name, short string // short is the name on narrow terminals
	of          func(m *Model) uictx.Pane
}{
	{"Plans", "Plans", func(m *Model) uictx.Pane { return &m.plans }},
	{"Leases", "Leases", func(m *Model) uictx.Pane { return &m.leases }},
	{"Worktrees", "Trees", func(m *Model) uictx.Pane { return &m.trees }},
	{"Workers", "Workers", func(m *Model) uictx.Pane { return &m.wrk }},
	{"Events", "Events", func(m *Model) uictx.Pane { return &m.events }},
	{"Merge", "Merge", func(m *Model) uictx.Pane { return &m.merge }},
	{"Inbox", "Inbox", func(m *Model) uictx.Pane { return &m.inbox }},
	{"Fleet", "Fleet", func(m *Model) uictx.Pane { return &m.fleet }},
}

func (m *Model) paneOf(p uictx.PaneID) uictx.Pane { return paneSpecs[p].of(m) }

// What a pane asks of the root that names the root's own overlays: a
// question (a dialog) or an overlay as it is. The rest are uictx's.
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
	// openReq pushes an overlay as it is.
	openReq struct{ o overlay }
)
