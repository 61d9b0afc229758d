package merge

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"

	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// Help is what `?` lists for the pane: its keys, its symbols, and the
// keys that change something (a viewer's session turns them off).
// Reading the forge (r) opens missing PRs and takes approvals in: an act.
func (*Pane) Help(k *uictx.KeyMap) uictx.PaneHelp {
	g := &k.Merge
	return uictx.PaneHelp{
		Keys: []*key.Binding{&g.Open, &g.Diff, &g.Approve, &g.NeedsWork, &g.Peer, &g.Add, &g.Remove, &g.Land, &g.Accept, &g.Browse, &g.Sync},
		Acts: []uictx.Act{{Key: &g.Approve, Verb: "approve"}, {Key: &g.NeedsWork, Verb: "send a candidate back"},
			{Key: &g.Peer, Verb: "start a peer review"}, {Key: &g.Add, Verb: "queue"}, {Key: &g.Remove, Verb: "unqueue"}, {Key: &g.Land, Verb: "land"},
			{Key: &g.Accept, Verb: "accept a move of the integration branch"}, {Key: &g.Sync, Verb: "read the forge"}},
	}
}

// Quiet leaves o and r out of `?` in a project without a forge: its help
// is as it was. A viewer's lists r with every other act it may not do.
func (l *Pane) Quiet(k *uictx.KeyMap) []*key.Binding {
	switch {
	case l.forge:
		return nil
	case l.readOnly:
		return []*key.Binding{&k.Merge.Browse}
	}
	return []*key.Binding{&k.Merge.Browse, &k.Merge.Sync}
}

// mergeStates say what each state of the Merge pane asks of a person, in
// the order a change goes through them.
var mergeStates = []struct {
	state landing.State
	means string
}{
	{landing.NeedsReview, "no review or approval stands for its tip: A approves it, v asks a peer"},
	{landing.Reviewed, "a peer's review stands for its tip (ACCEPT, REVISE or ESCALATE): A approves it"},
	{landing.Approved, "a person approved its tip: + queues it"},
	{landing.NoChange, "its branch is not ahead of the integration branch: nothing to check, approve or land"},
	{landing.Queued, "in the queue; its checks have not run on the tree it would land yet"},
	{landing.Checking, "its checks run now, on the tree it would land"},
	{landing.Ready, "every check passed on that exact tree: m lands the queue's head"},
	{landing.Conflict, "it does not merge cleanly into the integration branch"},
	{landing.Failed, "a check failed, could not run or timed out on that tree"},
	{landing.Stale, "the branch moved after a person approved it: A approves it again"},
	{landing.Landed, "on the integration branch"},
}

// StatesLegend is the Merge states and the check glyphs, which `?` shows
// on every pane.
func StatesLegend(cm *uictx.Common) uictx.Legend {
	l := uictx.Legend{Title: "Merge states (pane 6)"}
	for _, s := range mergeStates {
		l.Rows = append(l.Rows, [2]string{stateCell(cm, s.state, len(s.state)), s.means})
	}
	l.Rows = append(l.Rows, [2]string{"checks", strings.TrimPrefix(checkLegend, "checks: ")})
	return l
}
