package ui

// The verbs of a project whose claims are remote (remote.go): each is one
// claims.Act on the view the operator saw, the call the CLI's verbs make
// too, so the two never disagree on the steps: a leased plan moves and
// loses its lease in one step, and a lease that changed since the view
// fails its compare-and-swap instead of being dropped unseen. Nothing here
// writes a lease file: a key whose verb only the lease files have is
// refused (remoteState.refuseKeys).

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
)

// remoteVerbTimeout bounds one remote verb: a few pushes and fetches.
const remoteVerbTimeout = 2 * time.Minute

// remoteVerb is what a remote verb needs, copied off the model: the
// backend, the view the operator saw, who acts, and the lease in play.
type remoteVerb struct {
	b     claims.Backend
	view  *claims.View
	agent string
	ttl   time.Duration
	lease *model.Lease // the selected plan's remote lease, or nil
}

// verbFor copies what the verbs on lease need.
func (r *remoteState) verbFor(opt uictx.Options, lease *model.Lease) remoteVerb {
	v := remoteVerb{b: r.c.Backend, view: r.view, agent: opt.Agent,
		ttl: time.Duration(opt.TTL * float64(time.Second))}
	if kit.RemoteLease(lease) {
		l := *lease
		v.lease = &l
	}
	return v
}

// act runs verb on rel's plan to lane to (or the verb's default) off the
// UI goroutine, bounded: the operator acts on the lease the view shows,
// whoever holds it, as the dialog said.
func (v remoteVerb) act(verb model.Verb, rel string, to model.Lane, why string) tea.Cmd {
	host := look.Hostname()
	op := claims.Op{Verb: verb, Slug: kit.SlugOf(rel), To: to, Why: why, Force: true, TTL: v.ttl,
		Holder: claims.Holder{AgentID: v.agent, Host: host, PID: os.Getpid()}}
	return uictx.Action(string(verb), func() (string, error) {
		if v.view == nil {
			return "", errors.New("no view of the remote yet")
		}
		ctx, cancel := context.WithTimeout(context.Background(), remoteVerbTimeout)
		defer cancel()
		// A lease not yet seen expired long enough is a
		// *claims.TooEarlyError, whose words say how long.
		res, err := claims.Act(ctx, v.b, v.view, op)
		if err != nil {
			return "", err
		}
		return v.done(op, res), nil
	})
}

// remoteDone is what the status line says a verb that moves a plan did.
var remoteDone = map[model.Verb]string{model.Promote: "promoted", model.Park: "parked", model.Return: "returned", model.Complete: "moved"}

// done is the status line of a verb that went through.
func (v remoteVerb) done(op claims.Op, res claims.Result) string {
	slug := op.Slug
	switch {
	case op.Verb == model.Recover:
		return "recovered " + slug + ": now held by " + v.agent + " on " + op.Holder.Host + " for " + kit.Span(v.ttl.Seconds()) + " (r releases it)"
	case res.Dropped != nil && res.Rel == v.view.PlanRel(slug):
		return "released " + slug + kit.HeldOn(&res.Dropped.Lease) + "; it is ready again in " + kit.LaneOf(res.Rel)
	}
	msg := remoteDone[op.Verb] + " " + slug + " → " + kit.LaneOf(res.Rel)
	if res.Dropped != nil {
		msg += " (its lease of " + res.Dropped.AgentID + " dropped with the move)"
	}
	return msg
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
	switch verb {
	case model.Promote, model.Park, model.Complete:
		return func(to model.Lane, reason string) tea.Cmd { return v.act(verb, rel, to, reason) }
	case model.Return:
		var back model.Lane // a leased plan never left its ready lane
		if v.lease == nil {
			back = returnLane(d, rel)
		}
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
// remote backend in a remote project, else the lease files' own (r.Local).
func (m *Model) verbDo(r uictx.AskReq) func(model.Lane, string) tea.Cmd {
	if c := m.feed.claims(); c != nil {
		return c.do(m.Opt, m.d, r.Verb, r.Rel, r.Lease)
	}
	return r.Local
}
