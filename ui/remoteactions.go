package ui

// The verbs of a project whose claims are remote (remote.go): plans move
// on the remote integration branch through Backend.MovePlan; a lease is
// released, taken over or completed through the backend, named from the
// view the operator saw (claims.HeldFrom), so a lease that changed since
// fails its compare-and-swap instead of being dropped unseen. Nothing
// here writes a lease file: a key whose verb only the lease files have is
// refused (refuseRemoteKeys).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"fleetwatch/claims"
	"fleetwatch/model"
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

// remoteVerbFor copies what the verbs on lease need from the model.
func (m *Model) remoteVerbFor(lease *model.Lease) remoteVerb {
	v := remoteVerb{b: m.remote.c.Backend, view: m.remote.view, agent: m.opt.Agent,
		ttl: time.Duration(m.opt.TTL * float64(time.Second))}
	if remoteLease(lease) {
		l := *lease
		v.lease = &l
	}
	return v
}

// remoteCmd runs one remote verb off the UI goroutine, bounded.
func remoteCmd(what string, do func(ctx context.Context) (string, error)) tea.Cmd {
	return actionCmd(what, func() (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), remoteVerbTimeout)
		defer cancel()
		return do(ctx)
	})
}

// held is the selected lease as its holder holds it in the view: an
// operator's release or completion acts on that lease, no other.
func (v remoteVerb) held() (claims.Held, error) {
	if v.lease == nil || v.view == nil {
		return claims.Held{}, claims.ErrNoLease
	}
	return claims.HeldFrom(v.view, slugOf(v.lease.Rel), v.lease.AgentID, "")
}

// planRel is where the plan is on the remote branch: a leased plan shows
// in progress but stays in the ready lane it was claimed from.
func (v remoteVerb) planRel(rel string) string {
	if v.lease != nil && v.lease.Origin != "" {
		return v.lease.Origin
	}
	return rel
}

// move moves rel to lane on the remote branch, then drops the lease it
// had: the plan is set aside, and a lease on it would hold it once it
// comes back.
func (v remoteVerb) move(what, done, rel string, to model.Lane, why string) tea.Cmd {
	return remoteCmd(what, func(ctx context.Context) (string, error) {
		dst, err := v.b.MovePlan(ctx, v.planRel(rel), to, v.agent, why)
		if err != nil {
			return "", err
		}
		msg := done + " " + slugOf(rel) + " → " + laneOf(dst)
		if v.lease == nil {
			return msg, nil
		}
		h, err := v.held()
		if err == nil {
			err = v.b.Release(ctx, h, what+" by "+v.agent)
		}
		if err != nil {
			return "", fmt.Errorf("%s; but its lease stays: %w", msg, err)
		}
		return msg + " (its lease of " + v.lease.AgentID + " dropped)", nil
	})
}

func (v remoteVerb) release(rel string) tea.Cmd {
	return remoteCmd("release", func(ctx context.Context) (string, error) {
		h, err := v.held()
		if err == nil {
			err = v.b.Release(ctx, h, "released by "+v.agent)
		}
		if err != nil {
			return "", err
		}
		return "released " + slugOf(rel) + heldOn(v.lease) + "; it is ready again in " + laneOf(v.planRel(rel)), nil
	})
}

func (v remoteVerb) recover(rel string) tea.Cmd {
	host, _ := os.Hostname()
	me := claims.Holder{AgentID: v.agent, Host: host, PID: os.Getpid()}
	return remoteCmd("recover", func(ctx context.Context) (string, error) {
		if v.view == nil {
			return "", errors.New("no view of the remote yet")
		}
		// A lease not yet seen expired long enough is a
		// *claims.TooEarlyError, whose words say how long.
		if _, err := v.b.TakeOver(ctx, v.view, slugOf(rel), me, v.ttl); err != nil {
			return "", err
		}
		return "recovered " + slugOf(rel) + ": now held by " + v.agent + " on " + host + " for " + span(v.ttl.Seconds()) + " (r releases it)", nil
	})
}

func (v remoteVerb) complete(rel string, to model.Lane) tea.Cmd {
	if v.lease == nil {
		// In progress on the branch with no lease: a move.
		return v.move("complete", "moved", rel, to, "")
	}
	return remoteCmd("complete", func(ctx context.Context) (string, error) {
		h, err := v.held()
		if err != nil {
			return "", err
		}
		dst, err := v.b.Complete(ctx, h, to)
		return "moved " + slugOf(rel) + " → " + laneOf(dst), err
	})
}

// returnLane is where return sends a parked plan on the remote branch:
// the ready lane the event log says it was parked from, else features.
func (m *Model) returnLane(rel string) model.Lane {
	if m.d != nil {
		slug := slugOf(rel)
		for i := range m.d.events {
			e := &m.d.events[i]
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

// remoteDo is the dialog action of verb on the selected plan for a remote
// project; nil for a verb that has no remote form.
func (m *Model) remoteDo(verb model.Verb, rel string, lease *model.Lease) func(model.Lane, string) tea.Cmd {
	v := m.remoteVerbFor(lease)
	switch verb {
	case model.Promote:
		return func(to model.Lane, _ string) tea.Cmd { return v.move("promote", "promoted", rel, to, "") }
	case model.Park:
		return func(to model.Lane, reason string) tea.Cmd { return v.move("park", "parked", rel, to, reason) }
	case model.Return:
		if v.lease != nil {
			// A leased plan never left its ready lane: return is release.
			return func(model.Lane, string) tea.Cmd { return v.release(rel) }
		}
		back := m.returnLane(rel)
		return func(model.Lane, string) tea.Cmd { return v.move("return", "returned", rel, back, "") }
	case model.Release:
		return func(model.Lane, string) tea.Cmd { return v.release(rel) }
	case model.Recover:
		return func(model.Lane, string) tea.Cmd { return v.recover(rel) }
	case model.Complete:
		return func(to model.Lane, _ string) tea.Cmd { return v.complete(rel, to) }
	}
	return nil
}

// refuseRemoteKeys turns off, in a remote project, the keys whose verbs
// only the local lease files have: the inbox's decisions hand a plan's
// lease to the inbox and back, which a remote lease cannot be.
func (m *Model) refuseRemoteKeys(set setKey) {
	if m.remote == nil {
		return
	}
	name := m.remote.c.Backend.Name()
	for _, b := range []*key.Binding{&m.keys.Inbox.Approve, &m.keys.Inbox.Reject} {
		set(b, false, "inbox: with "+name+" claims a proposal's lease cannot wait in the inbox; decide it with the local lease files")
	}
}

// remoteOr is the dialog action of verb: through the remote backend in a
// remote project, else local.
func (m *Model) remoteOr(verb model.Verb, rel string, lease *model.Lease, local func(model.Lane, string) tea.Cmd) func(model.Lane, string) tea.Cmd {
	if m.remote == nil {
		return local
	}
	return m.remoteDo(verb, rel, lease)
}
