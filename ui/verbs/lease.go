// Package verbs is the engine's verbs as the panes ask for them: the
// question a verb asks first and the command that runs it. Several panes
// offer the same verb (r and R in the Plans and the Leases panes), so it
// is here, not in either.
package verbs

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// ReleaseRecover says whether r and R apply to the selection. The Plans
// pane offers both too, for the selected plan.
func ReleaseRecover(pc *uictx.Ctx) (release, recover bool) {
	rel, lease := pc.Target.Rel, pc.Target.Lease
	lane := model.Rel(rel).Lane()
	exists := rel != "" && pc.D.Has(rel)
	return exists && lane == model.InProgress && lease != nil, lease != nil && (!lease.Active(pc.Now) || !exists)
}

// AskRelease asks before giving up the selected plan's claim.
func AskRelease(pc *uictx.Ctx) tea.Msg {
	rel, lease := pc.Target.Rel, pc.Target.Lease
	body := []string{"Give up the claim on " + rel + "; the plan goes back to the lane it came from.",
		kit.Holder(pc.Now, lease)}
	body = append(body, kit.Takes(pc.Opt.Agent, pc.Now, lease, "Releasing")...)
	return uictx.AskReq{Q: uictx.Question{Title: "Release " + kit.SlugOf(rel), Body: body, Verb: "release"}, Rel: rel, Lease: lease,
		Verb: model.Release, Force: kit.Force(pc.Opt.Agent, lease, model.InProgress)}
}

// AskRecover asks before taking over the selected plan's stale lease, or
// removing a lease whose plan is gone.
func AskRecover(pc *uictx.Ctx) tea.Msg {
	rel, lease := pc.Target.Rel, pc.Target.Lease
	lane := model.Rel(rel).Lane()
	t := pc.Opt.Tree
	if !pc.D.Has(rel) && pc.Claims != nil {
		return uictx.Status("✗ recover: no plan at "+rel+" on the remote branch; a left-over remote lease is the backend's to clear (work-once --recover)", true)
	}
	if !pc.D.Has(rel) {
		return uictx.AskReq{Q: uictx.Question{
			Title: "Remove a left-over lease",
			Body: []string{"No plan is at " + rel + " any more; this lease is left over from a claim. " + kit.Holder(pc.Now, lease),
				"Remove it with the repair every work-once run does."},
			Verb: "repair",
			Do:   func(model.Lane, string) tea.Cmd { return repairCmd(t) },
		}, Rel: rel, Lease: lease}
	}
	body := []string{kit.Holder(pc.Now, lease)}
	if lane == model.InProgress {
		body = append(body, "You ("+pc.Opt.Agent+") take the lease over for "+kit.Span(pc.Opt.TTL)+"; then r releases the plan or c completes it.")
	} else {
		body = append(body, "The stale lease is dropped, so agents can pick "+rel+" again.")
	}
	return uictx.AskReq{Q: uictx.Question{Title: "Recover " + kit.SlugOf(rel), Body: body, Verb: "recover"}, Rel: rel, Lease: lease,
		Verb: model.Recover}
}

// repairCmd runs the repair every work-once run starts with: left-over
// leases, half-done claims and twin files.
func repairCmd(t *planfs.Tree) tea.Cmd {
	return uictx.Action("repair", func() (string, error) {
		snap, err := t.Scan()
		if err != nil {
			return "", err
		}
		r := t.Repair(snap)
		if len(r.Fixed) == 0 {
			return "", fmt.Errorf("nothing repaired (another worker may be mid-claim; try again in a minute)")
		}
		return "repaired: " + strings.Join(r.Fixed, "; "), nil
	})
}
