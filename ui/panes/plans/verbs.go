package plans

// The plan verbs the Plans pane asks before (promote, park, return,
// complete), each as a question whose answer the root runs through the
// project's claims backend (uictx.AskReq).

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/ui/verbs"
)

// verbKey asks before a verb on the selected plan; the bindings that
// cannot apply are disabled.
func (p *Pane) verbKey(pc *uictx.Ctx, msg tea.KeyMsg) (tea.Msg, bool) {
	k := &pc.Keys.Plans
	switch {
	case key.Matches(msg, k.Promote):
		return p.askPromote(pc), true
	case key.Matches(msg, k.Park):
		return p.askPark(pc), true
	case key.Matches(msg, k.Return):
		return p.askReturn(pc), true
	case key.Matches(msg, k.Release):
		return verbs.AskRelease(pc), true
	case key.Matches(msg, k.Recover):
		return verbs.AskRecover(pc), true
	case key.Matches(msg, k.Complete):
		return p.askComplete(pc), true
	}
	return nil, false
}

func (p *Pane) askPromote(pc *uictx.Ctx) tea.Msg {
	rel, row, lease := pc.Target.Rel, pc.Target.Row, pc.Target.Lease
	problems := planfs.PromoteProblems(row.Plan.Header)
	body := []string{"Move " + rel + " to a ready lane, where agents can pick it."}
	for _, p := range problems {
		body = append(body, "⚠ "+p)
	}
	verb := "promote"
	if len(problems) > 0 {
		verb = "promote anyway"
	}
	return uictx.AskReq{Q: uictx.Question{
		Title: "Promote " + row.Plan.Slug, Body: body, Verb: verb,
		Choices: []model.Lane{model.Features, model.Bugs},
	}, Rel: rel, Lease: lease, Verb: model.Promote, Force: len(problems) > 0}
}

func (p *Pane) askPark(pc *uictx.Ctx) tea.Msg {
	rel, row, lease := pc.Target.Rel, pc.Target.Row, pc.Target.Lease
	lane := model.Rel(rel).Lane()
	in := pc.TextField()
	in.Placeholder = "why (goes to the event log)"
	in.CharLimit = 300
	in.Width = 50
	cmd := in.Focus()
	body := []string{"Set " + rel + " aside; u returns it to where it came from."}
	if lease != nil || lane == model.InProgress {
		body = append(body, kit.Holder(pc.Now, lease))
	}
	body = append(body, kit.Takes(pc.Opt.Agent, pc.Now, lease, "Parking")...)
	return uictx.BatchReq{uictx.AskReq{Q: uictx.Question{
		Title: "Park " + row.Plan.Slug, Body: body, Verb: "park", Input: &in,
		Choices: []model.Lane{model.Blocked, model.Ambiguous},
	}, Rel: rel, Lease: lease, Verb: model.Park, Force: kit.Force(pc.Opt.Agent, lease, lane)}, cmd}
}

func (p *Pane) askReturn(pc *uictx.Ctx) tea.Msg {
	rel, row, lease := pc.Target.Rel, pc.Target.Row, pc.Target.Lease
	lane := model.Rel(rel).Lane()
	body := []string{"Send " + rel + " back to the ready lane it came from."}
	if lane == model.InProgress {
		body = append(body, kit.Holder(pc.Now, lease))
	}
	body = append(body, kit.Takes(pc.Opt.Agent, pc.Now, lease, "Returning")...)
	return uictx.AskReq{Q: uictx.Question{Title: "Return " + row.Plan.Slug, Body: body, Verb: "return"}, Rel: rel, Lease: lease,
		Verb: model.Return, Force: kit.Force(pc.Opt.Agent, lease, lane)}
}

func (p *Pane) askComplete(pc *uictx.Ctx) tea.Msg {
	rel, row, lease := pc.Target.Rel, pc.Target.Row, pc.Target.Lease
	body := []string{"Finish " + rel + ": review-needed/ waits for a person, completed/ is done.",
		kit.Holder(pc.Now, lease)}
	body = append(body, kit.Takes(pc.Opt.Agent, pc.Now, lease, "Completing")...)
	return uictx.AskReq{Q: uictx.Question{
		Title: "Complete " + row.Plan.Slug, Body: body, Verb: "move",
		Choices: []model.Lane{model.ReviewNeeded, model.Completed},
	}, Rel: rel, Lease: lease, Verb: model.Complete, Force: kit.Force(pc.Opt.Agent, lease, model.InProgress)}
}
