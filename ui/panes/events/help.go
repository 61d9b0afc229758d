package events

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// Help is what `?` lists for the pane: its keys, its symbols, and the
// keys that change something (a viewer's session turns them off).
func (*Pane) Help(k *uictx.KeyMap) uictx.PaneHelp {
	return uictx.PaneHelp{
		Keys: []*key.Binding{&k.Events.Open},
		Legends: []uictx.Legend{{Title: "Events", Rows: [][2]string{
			{"⚠", "a warning from the last scan of .plans/, above the event log"}}}},
	}
}
