package merge

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// Help is what `?` lists for the pane: its keys, its symbols, and the
// keys that change something (a viewer's session turns them off).
func (*Pane) Help(k *uictx.KeyMap) uictx.PaneHelp {
	g := &k.Merge
	return uictx.PaneHelp{
		Keys: []*key.Binding{&g.Open, &g.Diff, &g.Approve, &g.NeedsWork, &g.Peer, &g.Add, &g.Remove, &g.Land, &g.Accept},
		Acts: []uictx.Act{{Key: &g.Approve, Verb: "approve"}, {Key: &g.NeedsWork, Verb: "send a candidate back"},
			{Key: &g.Peer, Verb: "start a peer review"}, {Key: &g.Add, Verb: "queue"}, {Key: &g.Remove, Verb: "unqueue"}, {Key: &g.Land, Verb: "land"},
			{Key: &g.Accept, Verb: "accept a move of the integration branch"}},
	}
}
