package ui

import (
	"github.com/fleetwatch/fleetwatch/ui/panes/events"
	"github.com/fleetwatch/fleetwatch/ui/panes/fleet"
	"github.com/fleetwatch/fleetwatch/ui/panes/inbox"
	"github.com/fleetwatch/fleetwatch/ui/panes/leases"
	"github.com/fleetwatch/fleetwatch/ui/panes/merge"
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
	// pkg makes a pane of its own package (ui/panes/<name>) at its place
	// in the tab order; of is a pane still in this package, on the model.
	pkg func(id uictx.PaneID) uictx.Pane
	of  func(m *Model) uictx.Pane
}

// paneSpecs is the registry, the one list of panes: its order is the tab
// order and the number keys, its names the tabs. A new pane is its folder
// under ui/panes/ and one line here (docs/panes.md).
var paneSpecs = []paneSpec{
	{"Plans", "Plans", "slug, title, model or agent, in every lane", nil, func(m *Model) uictx.Pane { return &m.plans }},
	{"Leases", "Leases", "plan, owner or origin", leases.New, nil},
	{"Worktrees", "Trees", "agent, branch or path", trees.New, nil},
	{"Workers", "Workers", "agent, tier, model, plan, state or note", workers.New, nil},
	{"Events", "Events", "event, plan, lane, agent or reason", events.New, nil},
	{"Merge", "Merge", "", merge.New, nil},
	{"Inbox", "Inbox", "", inbox.New, nil},
	{"Fleet", "Fleet", "", fleet.New, nil},
}

// paneCount is how many panes the registry lists.
func paneCount() uictx.PaneID { return uictx.PaneID(len(paneSpecs)) }

func (m *Model) paneOf(p uictx.PaneID) uictx.Pane { return m.panes[p] }

// openPanes makes the registry's panes for a new model.
func (s *paneSet) openPanes(m *Model) {
	s.panes = make([]uictx.Pane, len(paneSpecs))
	for i, spec := range paneSpecs {
		if spec.pkg != nil {
			s.panes[i] = spec.pkg(uictx.PaneID(i))
		} else {
			s.panes[i] = spec.of(m)
		}
	}
}
