package fleet

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// Help is what `?` lists for the pane: its key and its symbols.
func (*Pane) Help(k *uictx.KeyMap) uictx.PaneHelp {
	return uictx.PaneHelp{
		Keys: []*key.Binding{&k.Fleet.Open},
		Legends: []uictx.Legend{{Title: "Fleet", Rows: [][2]string{
			{"████░░  62%", "today's spend against a daily budget (fleet, endpoint, tier)"},
			{"1st ok", "plans whose first checks passed, of those checked"},
			{"needs-work", "plans a peer asked more work of, of those reviewed"},
			{"to land", "median time from a plan's first claim to its landing"},
			{"—", "nothing to count yet (no landing, no check, no review)"}}}},
	}
}
