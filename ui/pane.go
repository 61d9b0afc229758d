package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"

	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/panes/events"
	"github.com/fleetwatch/fleetwatch/ui/panes/fleet"
	"github.com/fleetwatch/fleetwatch/ui/panes/inbox"
	"github.com/fleetwatch/fleetwatch/ui/panes/leases"
	"github.com/fleetwatch/fleetwatch/ui/panes/merge"
	"github.com/fleetwatch/fleetwatch/ui/panes/plans"
	"github.com/fleetwatch/fleetwatch/ui/panes/trees"
	"github.com/fleetwatch/fleetwatch/ui/panes/workers"
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
)

// paneSpec is one pane of the registry.
type paneSpec struct {
	name, short string // short is the name on narrow terminals
	// hint is what the pane's filter matches, in its empty text field.
	hint string
	// pkg makes the pane, a package of its own (ui/panes/<name>), at its
	// place in the tab order.
	pkg func(id uictx.PaneID) uictx.Pane
}

// paneSpecs is the registry, the one list of panes: its order is the tab
// order and the number keys, its names the tabs. A new pane is its folder
// under ui/panes/ and one line here (docs/panes.md).
var paneSpecs = []paneSpec{
	{"Plans", "Plans", "slug, title, model or agent, in every lane", plans.New},
	{"Leases", "Leases", "plan, owner or origin", leases.New},
	{"Worktrees", "Trees", "agent, branch or path", trees.New},
	{"Workers", "Workers", "agent, tier, model, plan, state or note", workers.New},
	{"Events", "Events", "event, plan, lane, agent or reason", events.New},
	{"Merge", "Merge", "", merge.New},
	{"Inbox", "Inbox", "", inbox.New},
	{"Fleet", "Fleet", "", fleet.New},
}

// paneCount is how many panes the registry lists.
func paneCount() uictx.PaneID { return uictx.PaneID(len(paneSpecs)) }

func (m *Model) paneOf(p uictx.PaneID) uictx.Pane { return m.panes[p] }

// openPanes makes the registry's panes for a new model.
func (s *paneSet) openPanes() {
	s.panes = make([]uictx.Pane, len(paneSpecs))
	for i, spec := range paneSpecs {
		s.panes[i] = spec.pkg(uictx.PaneID(i))
	}
}

// DefaultKeyMap returns the bindings with their help text, the panes'
// number keys among them.
func DefaultKeyMap() uictx.KeyMap {
	k := uictx.DefaultKeys()
	k.Panes = paneKeys()
	return k
}

// paneKeys are the number keys, one per pane in the pane list.
func paneKeys() []key.Binding {
	ks := make([]key.Binding, len(paneSpecs))
	for i, p := range paneSpecs {
		n := kit.Itoa(i + 1)
		ks[i] = key.NewBinding(key.WithKeys(n), key.WithHelp(n, strings.ToLower(p.name)))
	}
	return ks
}
