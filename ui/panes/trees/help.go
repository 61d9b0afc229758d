package trees

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// Help is what `?` lists for the pane: its keys, its symbols, and the
// keys that change something (a viewer's session turns them off).
func (*Pane) Help(k *uictx.KeyMap) uictx.PaneHelp {
	return uictx.PaneHelp{
		Keys: []*key.Binding{&k.Trees.Open, &k.Trees.Diff},
		Legends: []uictx.Legend{{Title: "Worktrees", Rows: [][2]string{
			{"●", "on disk and clean"}, {"✗", "dirty, missing, or git could not read it"},
			{"↑N ↓N", "commits ahead of / behind the integration branch"}}}},
	}
}
