package inbox

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// Help is what `?` lists for the pane: its keys, its symbols, and the
// keys that change something (a viewer's session turns them off).
func (*Pane) Help(k *uictx.KeyMap) uictx.PaneHelp {
	i := &k.Inbox
	return uictx.PaneHelp{
		Keys: []*key.Binding{&i.Open, &i.Approve, &i.Reject, &i.Extend, &i.Resume, &i.Stop, &i.Allow, &i.Deny, &i.Dismiss},
		Acts: []uictx.Act{{Key: &i.Approve, Verb: "approve a plan"}, {Key: &i.Reject, Verb: "reject a plan"},
			{Key: &i.Extend, Verb: "extend a budget"}, {Key: &i.Resume, Verb: "resume a run"}, {Key: &i.Stop, Verb: "stop a run"},
			{Key: &i.Allow, Verb: "answer an agent"}, {Key: &i.Deny, Verb: "answer an agent"}, {Key: &i.Dismiss, Verb: "dismiss comments"}},
	}
}

// Quiet leaves D out of `?` while no comment from the forge waits: a
// project without a forge sees the pane's help as it was. A viewer's
// lists it with every other act it may not do.
func (l *Pane) Quiet(k *uictx.KeyMap) []*key.Binding {
	if len(l.threads) > 0 || l.readOnly {
		return nil
	}
	return []*key.Binding{&k.Inbox.Dismiss}
}
