package ui

// The verbs the dialogs confirm: each is one claims.Act, the call the
// CLI's verbs make too, through the project's claims backend (the lease
// files' own, claims.Local, or the remote's), so the faces never disagree
// on the steps: a leased plan moves and loses its lease in one step, and
// a remote lease that changed since the view fails its compare-and-swap
// instead of being dropped unseen. A key whose verb only the lease files
// have is refused in a remote project (remoteState.refuseKeys).

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// verbTimeout bounds one verb: a few pushes and fetches on a remote.
const verbTimeout = 2 * time.Minute

// verbCall is what a verb needs, copied off the model: the backend, the
// view the operator saw, who acts, and the lease in play.
type verbCall struct {
	b claims.Backend
	// view is the one the operator saw (the lease files': the board).
	view  *claims.View
	local bool
	agent string
	ttl   time.Duration
	lease *model.Lease // the selected plan's remote lease, or nil
	force bool
}

// verbFor copies what the verbs on lease need.
func (r *remoteState) verbFor(opt uictx.Options, lease *model.Lease) verbCall {
	v := verbCall{b: r.c.Backend, view: r.view, agent: opt.Agent,
		ttl: time.Duration(opt.TTL * float64(time.Second)), force: true}
	if kit.RemoteLease(lease) {
		l := *lease
		v.lease = &l
	}
	return v
}

// localVerb is r's verb on the lease files of opt.Tree, on board b as the
// operator saw it.
func localVerb(opt uictx.Options, b *model.Board, r uictx.AskReq) verbCall {
	l := claims.NewLocal(opt.Tree)
	return verbCall{b: l, view: l.ViewOf(boardSnapshot(b)), local: true, agent: opt.Agent,
		ttl: time.Duration(opt.TTL * float64(time.Second)), lease: r.Lease, force: r.Force}
}

// boardSnapshot is the scan board b shows, copied: the verb reads it off
// the UI goroutine.
func boardSnapshot(b *model.Board) *model.Snapshot {
	s := &model.Snapshot{}
	if b == nil {
		return s
	}
	s.Plans = make([]model.Plan, 0, len(b.Rows))
	for _, r := range b.Rows {
		if r.Plan != nil {
			s.Plans = append(s.Plans, *r.Plan)
		}
	}
	s.Leases = append([]model.Lease(nil), b.Leases...)
	return s
}

// act runs verb on rel's plan to lane to (or the verb's default) off the
// UI goroutine, bounded: the operator acts on the lease the view shows,
// whoever holds it, as the dialog said.
func (v verbCall) act(verb model.Verb, rel string, to model.Lane, why string) tea.Cmd {
	host := look.Hostname()
	op := claims.Op{Verb: verb, Slug: kit.SlugOf(rel), To: to, Why: why, Force: v.force, TTL: v.ttl,
		Holder: claims.Holder{AgentID: v.agent, Host: host, PID: os.Getpid()}}
	return uictx.Action(string(verb), func() (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), verbTimeout)
		defer cancel()
		if v.view == nil {
			return "", errors.New("no view of the remote yet")
		}
		// A lease not yet seen expired long enough is a
		// *claims.TooEarlyError, whose words say how long.
		res, err := proc.Act(ctx, v.b, v.view, op)
		if err != nil {
			return "", err
		}
		if v.local {
			return localDone(op, res), nil
		}
		return v.done(op, res), nil
	})
}

// remoteDone is what the status line says a verb that moves a plan did.
var remoteDone = map[model.Verb]string{model.Promote: "promoted", model.Park: "parked", model.Return: "returned", model.Complete: "moved"}

// done is the status line of a remote verb that went through.
func (v verbCall) done(op claims.Op, res claims.Result) string {
	slug := op.Slug
	switch {
	case op.Verb == model.Recover:
		return "recovered " + slug + ": now held by " + v.agent + " on " + op.Holder.Host + " for " + kit.Span(v.ttl.Seconds()) + " (r releases it)"
	case res.Freed && res.Dropped != nil:
		return "released " + slug + kit.HeldOn(&res.Dropped.Lease) + "; it is ready again in " + kit.LaneOf(res.Rel)
	}
	msg := remoteDone[op.Verb] + " " + slug + " → " + kit.LaneOf(res.Rel)
	if res.Dropped != nil {
		msg += " (its lease of " + res.Dropped.AgentID + " dropped with the move)"
	}
	return msg
}

// localDone is the status line of a verb on the lease files that went
// through.
func localDone(op claims.Op, res claims.Result) string {
	slug, lane := op.Slug, kit.LaneOf(res.Rel)
	switch op.Verb {
	case model.Recover:
		return localRecovered(op, res)
	case model.Release:
		return "released " + slug + " → " + lane
	case model.Park:
		return "parked " + slug + " in " + lane
	}
	return remoteDone[op.Verb] + " " + slug + " → " + lane
}

// localRecovered is the status line of a recover on the lease files: a
// ready plan's stale lease is only cleared.
func localRecovered(op claims.Op, res claims.Result) string {
	if res.Holds == nil {
		return "recovered " + op.Slug + ": its stale lease is gone"
	}
	return "recovered " + op.Slug + ": now held by " + op.Holder.AgentID + " for " + kit.Span(op.TTL.Seconds()) + " (r releases it)"
}

// returnLane is where return sends a parked plan on the remote branch:
// the ready lane the event log says it was parked from, else features.
func returnLane(d *uictx.Data, rel string) model.Lane {
	if d != nil {
		slug := kit.SlugOf(rel)
		for i := range d.Events {
			e := &d.Events[i]
			if e.Event != "park" || e.Slug != slug {
				continue
			}
			for _, from := range []string{e.Origin, e.From} {
				if l := model.Rel(from).Lane(); l.Ready() {
					return l
				}
			}
			break
		}
	}
	return model.Features
}

// do is the dialog action of verb on the selected plan for a remote
// project, as the board d shows it; nil for a verb that has no remote form.
func (r *remoteState) do(opt uictx.Options, d *uictx.Data, verb model.Verb, rel string, lease *model.Lease) func(model.Lane, string) tea.Cmd {
	v := r.verbFor(opt, lease)
	var back model.Lane // a leased plan never left its ready lane
	if verb == model.Return && v.lease == nil {
		// The remote's return sends a free plan to features: the event
		// log here is what knows where it was parked from.
		back = returnLane(d, rel)
	}
	return v.do(verb, rel, back)
}

// do is the dialog action of verb on rel, back being where return sends
// it ("": the verb's default); nil for a verb the dialogs do not run.
func (v verbCall) do(verb model.Verb, rel string, back model.Lane) func(model.Lane, string) tea.Cmd {
	switch verb {
	case model.Promote, model.Park, model.Complete:
		return func(to model.Lane, reason string) tea.Cmd { return v.act(verb, rel, to, reason) }
	case model.Return:
		return func(model.Lane, string) tea.Cmd { return v.act(verb, rel, back, "") }
	case model.Release, model.Recover:
		return func(model.Lane, string) tea.Cmd { return v.act(verb, rel, "", "") }
	}
	return nil
}

// refuseKeys turns off, in a remote project, the keys whose verbs only
// the local lease files have: the inbox's decisions hand a plan's lease to
// the inbox and back, which a remote lease cannot be.
func (r *remoteState) refuseKeys(keys *uictx.KeyMap, set uictx.SetKey) {
	if r == nil {
		return
	}
	name := r.c.Backend.Name()
	for _, b := range []*key.Binding{&keys.Inbox.Approve, &keys.Inbox.Reject} {
		set(b, false, "inbox: with "+name+" claims a proposal's lease cannot wait in the inbox; decide it with the local lease files")
	}
}

// verbDo is the one place a verb's dialog action is chosen: through the
// remote backend in a remote project, else the lease files' own.
func (m *Model) verbDo(r uictx.AskReq) func(model.Lane, string) tea.Cmd {
	if c := m.feed.claims(); c != nil {
		return c.do(m.Opt, m.d, r.Verb, r.Rel, r.Lease)
	}
	var board *model.Board
	if m.d != nil {
		board = m.d.Board
	}
	return localVerb(m.Opt, board, r).do(r.Verb, r.Rel, "")
}
