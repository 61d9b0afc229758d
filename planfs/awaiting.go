package planfs

import (
	"fmt"

	"github.com/fleetwatch/fleetwatch/model"
)

// The inbox-held lease (the coordinator's plan first). A plan turn ends
// with its holder handing the lease to the inbox (AwaitApproval): the plan
// stays claimed by its agent and in in-progress/, but the lease neither
// expires into recover nor is picked by anyone. A decision marks it
// AwaitResume; the next run of its agent (or, once that agent is gone, of a
// fit worker) takes it up with Resume, a fenced takeover under a new token,
// so the old run's token can no longer renew the lease or move the plan.
// Every step runs under the lease lock and appends one event.

// AwaitApproval hands a's own lease on rel to the inbox: it is marked
// awaiting approval and set to run out only MaxLeaseTTL from now, so anchor,
// which reads nothing but expires_at, never sees it expire soon either.
func (t *Tree) AwaitApproval(rel string, a Actor) error {
	return t.changeAwaiting(rel, "awaiting-approval", func(cur *model.Lease) error {
		if !a.holds(cur) {
			return notHolder(rel, cur, a)
		}
		return nil
	}, func(next *model.Lease) {
		next.Awaiting = model.AwaitApproval
		next.ExpiresAt = t.now() + model.MaxLeaseTTL
	}, a)
}

// MarkResume records that rel's waiting proposal was decided (approved or
// rejected): the lease now waits for its agent to take the plan up. Anyone
// may mark it (the coordinator decides, not the holder), but only a lease
// awaiting approval.
func (t *Tree) MarkResume(rel string, by Actor) error {
	return t.changeAwaiting(rel, "decided", func(cur *model.Lease) error {
		if cur.Awaiting != model.AwaitApproval {
			return planErr(rel, ErrNotOwner, "not awaiting approval%s", awaitingNote(cur))
		}
		return nil
	}, func(next *model.Lease) { next.Awaiting = model.AwaitResume }, by)
}

// Unresume gives a's resumed lease on rel back to the inbox as decided,
// for a run that took it up and then may not start (a cap on live runs
// is full): the decision stays, and the next run takes the plan up again.
func (t *Tree) Unresume(rel string, a Actor) error {
	return t.changeAwaiting(rel, "unresumed", func(cur *model.Lease) error {
		switch {
		case !a.holds(cur):
			return notHolder(rel, cur, a)
		case cur.Awaiting != "":
			return planErr(rel, ErrClaimed, "already %s", cur.AwaitingText())
		}
		return nil
	}, func(next *model.Lease) {
		next.Awaiting = model.AwaitResume
		next.ExpiresAt = t.now() + model.MaxLeaseTTL
	}, a)
}

// awaitingNote says what an inbox lease is instead, for a refusal.
func awaitingNote(l *model.Lease) string {
	if l.Awaiting == "" {
		return " (held by " + l.AgentID + ", not by the inbox)"
	}
	return " (" + l.AwaitingText() + ")"
}

// changeAwaiting rewrites rel's lease under the lease lock when ok accepts
// it, with edit applied, and logs event by who.
func (t *Tree) changeAwaiting(rel, event string, ok func(*model.Lease) error, edit func(*model.Lease), who Actor) error {
	if err := t.refuse(rel); err != nil {
		return err
	}
	lane, name, err := SplitRel(rel)
	if err != nil {
		return err
	}
	if lane != model.InProgress {
		return planErr(rel, ErrWrongLane, "only an in-progress plan waits in the inbox")
	}
	unlock, err := t.lockLeases(lockWait)
	if err != nil {
		return planErr(rel, err, "%v", err)
	}
	defer unlock()
	if _, err := t.needPlan(rel); err != nil {
		return err
	}
	cur := t.ReadLease(rel)
	switch {
	case cur == nil:
		return planErr(rel, ErrNoLease, "no lease")
	case cur.Corrupt != "":
		return planErr(rel, ErrNoLease, "lease file is unreadable (%s)", cur.Corrupt)
	}
	if err := ok(cur); err != nil {
		return err
	}
	next := *cur
	edit(&next)
	if err := t.writeLease(rel, next); err != nil {
		return planErr(rel, err, "cannot write lease: %v", errText(err))
	}
	t.appendEvent(Event{Event: event, Slug: model.SlugOf(name), From: rel, To: rel, AgentID: who.AgentID, Origin: cur.Origin, Reason: who.Reason, Lease: cur.Token})
	return nil
}

// Resume takes up rel's decided plan for agent: a fresh lease (new token,
// the same origin, no longer held by the inbox) running ttl from now. Only
// a lease awaiting resume is taken, and only by its own agent unless
// takeOver (its agent is gone; the caller judged that). Of several racing
// resumers exactly one wins: the others find the lease no longer awaiting.
func (t *Tree) Resume(rel, agent string, ttl float64, takeOver bool) (Claimed, error) {
	name, err := t.resumable(rel, ttl)
	if err != nil {
		return Claimed{}, err
	}
	unlock, err := t.lockLeases(lockWait)
	if err != nil {
		return Claimed{}, planErr(rel, err, "%v", err)
	}
	defer unlock()
	if _, err := t.needPlan(rel); err != nil {
		return Claimed{}, err
	}
	cur := t.ReadLease(rel)
	if err := resumeRefusal(rel, cur, agent, takeOver); err != nil {
		return Claimed{}, err
	}
	next := t.newLease(rel, agent, cur.Origin, newToken(), ttl)
	if err := t.writeLease(rel, next); err != nil {
		return Claimed{}, planErr(rel, err, "cannot write lease: %v", errText(err))
	}
	reason := "resumed by its own agent"
	if cur.AgentID != agent {
		reason = fmt.Sprintf("takeover from %s (gone)", cur.AgentID)
	}
	t.appendEvent(Event{Event: "resumed", Slug: model.SlugOf(name), From: rel, To: rel, AgentID: agent, Origin: cur.Origin, Reason: reason, Lease: next.Token})
	return Claimed{Rel: rel, Token: next.Token}, nil
}

// resumable checks what Resume can tell before taking the lease lock: rel
// is an in-progress plan's path, and ttl is valid. It returns the plan's
// file name.
func (t *Tree) resumable(rel string, ttl float64) (string, error) {
	if err := t.refuse(rel); err != nil {
		return "", err
	}
	lane, name, err := SplitRel(rel)
	if err != nil {
		return "", err
	}
	if lane != model.InProgress {
		return "", planErr(rel, ErrWrongLane, "only an in-progress plan is resumed")
	}
	if err := ValidTTL(ttl); err != nil {
		return "", planErr(rel, err, "%v", err)
	}
	return name, nil
}

// resumeRefusal says why agent may not resume rel with lease cur: none, not
// decided yet, or decided for another agent (unless takeOver).
func resumeRefusal(rel string, cur *model.Lease, agent string, takeOver bool) error {
	switch {
	case cur == nil || cur.Corrupt != "":
		return planErr(rel, ErrNoLease, "no lease awaiting resume")
	case cur.Awaiting != model.AwaitResume:
		return planErr(rel, ErrClaimed, "not decided yet%s", awaitingNote(cur))
	case cur.AgentID != agent && !takeOver:
		return planErr(rel, ErrNotOwner, "decided for %s, not %s", cur.AgentID, agent)
	}
	return nil
}
