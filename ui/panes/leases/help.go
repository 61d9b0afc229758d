package leases

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// Help is what `?` lists for the pane: its keys, its symbols, and the
// keys that change something (a viewer's session turns them off).
func (*Pane) Help(k *uictx.KeyMap) uictx.PaneHelp {
	l := &k.Leases
	return uictx.PaneHelp{
		Keys: []*key.Binding{&l.Open, &l.Release, &l.Recover},
		Legends: []uictx.Legend{{Title: "Leases", Rows: [][2]string{
			{"●", "live"}, {"✗", "expired"}, {"?", "unreadable"}, {"◇", "held by the inbox (awaiting approval)"}}}},
		Acts: []uictx.Act{{Key: &l.Release, Verb: "release"}, {Key: &l.Recover, Verb: "recover"}},
	}
}
