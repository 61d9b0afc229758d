package plans

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// Help is what `?` lists for the pane: its keys, its symbols, and the
// keys that change something (a viewer's session turns them off).
func (*Pane) Help(k *uictx.KeyMap) uictx.PaneHelp {
	pk := &k.Plans
	return uictx.PaneHelp{
		Keys: []*key.Binding{&pk.Preview, &pk.PrevLane, &pk.NextLane, &pk.Promote, &pk.Park, &pk.Return,
			&pk.Release, &pk.Recover, &pk.Complete, &pk.Diff, &pk.New, &pk.Edit, &pk.PreviewDown, &pk.PreviewUp,
			// The selected plan's own candidate, as in the Merge pane.
			&k.Merge.Approve, &k.Merge.NeedsWork, &k.Merge.Add, &k.Merge.Land},
		Legends: []uictx.Legend{
			{Title: "Tier columns (S M R F = small mid reasoner frontier)", Rows: [][2]string{
				{"1 2 …", "the rank that tier's next bare pick gives the plan (1 = claimed next)"},
				{"3?", "eligible, but no Preferred model or tier matched (fit unknown)"},
				{"·", "fit, but held back: dependencies unmet, leased, or a person's"},
				{"↑ ↓", "overqualified / underqualified for the plan"},
				{"✓ ?", "outside the ready lanes: good fit / unknown fit"}}},
			{Title: "Rows", Rows: [][2]string{
				{"●", "some tier would pick it now"}, {"○", "no tier would"}, {"▸", "selected"},
				{"!", "check warns about the plan (its preview says why)"}}},
		},
		Acts: []uictx.Act{{Key: &pk.Promote, Verb: "promote"}, {Key: &pk.Park, Verb: "park"}, {Key: &pk.Return, Verb: "return"},
			{Key: &pk.Release, Verb: "release"}, {Key: &pk.Recover, Verb: "recover"}, {Key: &pk.Complete, Verb: "complete"},
			{Key: &pk.New, Verb: "write a new plan"}, {Key: &pk.Edit, Verb: "edit a plan"}},
	}
}
