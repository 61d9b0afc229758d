package planfs

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strings"

	"github.com/fleetwatch/fleetwatch/model"
)

// Renew extends a's own lease on rel by ttl seconds (the heartbeat).
// Unlike anchor it never creates a lease or takes over someone else's.
func (t *Tree) Renew(rel string, a Actor, ttl float64) (*model.Lease, error) {
	if err := t.refuse(rel); err != nil {
		return nil, err
	}
	if _, _, err := SplitRel(rel); err != nil {
		return nil, err
	}
	if err := ValidTTL(ttl); err != nil {
		return nil, planErr(rel, err, "%v", err)
	}
	unlock, err := t.lockLeases(lockWait)
	if err != nil {
		return nil, planErr(rel, err, "%v", err)
	}
	defer unlock()
	return t.renew(rel, a, ttl)
}

// renew is Renew for a caller holding the lease lock.
func (t *Tree) renew(rel string, a Actor, ttl float64) (*model.Lease, error) {
	cur := t.ReadLease(rel)
	switch {
	case cur == nil:
		return nil, planErr(rel, ErrNoLease, "no lease to renew")
	case cur.Corrupt != "":
		return nil, planErr(rel, ErrNoLease, "lease file is unreadable (%s)", cur.Corrupt)
	case !a.holds(cur):
		return nil, notHolder(rel, cur, a)
	case cur.Awaiting != "":
		// Its agent's turn is over: the inbox holds the plan until a
		// resume gives it a fresh lease.
		return nil, planErr(rel, ErrNotOwner, "%s; the coordinator's inbox holds it, a heartbeat does not", cur.AwaitingText())
	}
	next := *cur
	next.ExpiresAt = t.now() + model.LeaseSpan(ttl)
	if err := t.writeLease(rel, next); err != nil {
		return nil, planErr(rel, err, "cannot write lease: %v", errText(err))
	}
	return &next, nil
}

// notHolder is the refusal for an actor whose lease rel's is not.
func notHolder(rel string, cur *model.Lease, a Actor) error {
	if cur.AgentID == a.AgentID {
		// Same id, other token: the plan was recovered or claimed again
		// since a's lease was taken; a is the stale one.
		return planErr(rel, ErrNotOwner, "held by %s under a newer lease (recovered or claimed again since); this one is lost", cur.AgentID)
	}
	return planErr(rel, ErrNotOwner, "lease held by %s, not %s", cur.AgentID, a.AgentID)
}

// ValidTTL rejects lease lifetimes that cannot be written as JSON or make
// no sense.
func ValidTTL(ttl float64) error {
	if math.IsNaN(ttl) || math.IsInf(ttl, 0) || ttl <= 0 {
		return fmt.Errorf("lease TTL must be a positive number of seconds, not %v", ttl)
	}
	return nil
}

// owned checks that a may act on rel's lease: its own, or any with force.
// An in-progress plan with no lease at all is free to anyone, as in anchor,
// unless a claim is still moving it in. Callers hold the lease lock.
func (t *Tree) owned(rel string, a Actor) (*model.Lease, error) {
	cur := t.ReadLease(rel)
	if cur == nil {
		lane, name := model.Rel(rel).Lane(), model.Rel(rel).Name()
		if lane == model.InProgress && t.claimInFlight(name) {
			return nil, planErr(rel, ErrClaimed, "being claimed right now; try again in a minute")
		}
		return nil, nil
	}
	if a.Force {
		return cur, nil
	}
	if cur.Corrupt != "" {
		return nil, planErr(rel, ErrNotOwner, "lease file is unreadable (%s); recover it, or force", cur.Corrupt)
	}
	if !a.holds(cur) {
		if cur.AgentID == a.AgentID {
			return nil, notHolder(rel, cur, a)
		}
		if !cur.Active(t.now()) {
			return nil, planErr(rel, ErrNotOwner, "owned by %s (lease expired; recover it first, or force)", cur.AgentID)
		}
		return nil, planErr(rel, ErrNotOwner, "owned by %s", cur.AgentID)
	}
	return cur, nil
}

// moveOwned checks a's right to rel's lease and moves the plan to lane
// under the lease lock, so no heartbeat or recover slips in between.
func (t *Tree) moveOwned(rel string, to func(lease *model.Lease) (model.Lane, error), a Actor, step string, ev Event) (string, error) {
	unlock, err := t.lockLeases(lockWait)
	if err != nil {
		return "", planErr(rel, err, "%v", err)
	}
	defer unlock()
	lease, err := t.owned(rel, a)
	if err != nil {
		return "", err
	}
	lane, err := to(lease)
	if err != nil {
		return "", err
	}
	return t.move(rel, lane, step, lease, t.ownedMoveEvent(rel, a, lease, ev))
}

// ownedMoveEvent completes ev, the event of a's move of rel under lease
// (nil: none): a's reason, the plan's origin, and the lease's token when
// a holds it, else that the move was forced.
func (t *Tree) ownedMoveEvent(rel string, a Actor, lease *model.Lease, ev Event) Event {
	if ev.Reason == "" {
		ev.Reason = a.Reason
	}
	if ev.Origin == "" && lease != nil {
		ev.Origin = lease.Origin
	}
	if ev.Origin == "" {
		ev.Origin = t.eventOrigin(rel)
	}
	switch {
	case lease == nil:
	case a.holds(lease):
		// Its holder moved it: a driver finds its own token here and
		// knows its agent handed the plan on, not somebody else.
		ev.Lease = lease.Token
	default:
		ev.Forced = true
	}
	return ev
}

// move relocates a plan to lane without overwriting and logs it; it then
// drops lease, when given, if nobody replaced it meanwhile.
func (t *Tree) move(rel string, to model.Lane, step string, lease *model.Lease, ev Event) (string, error) {
	from, name, err := SplitRel(rel)
	if err != nil {
		return "", err
	}
	dst := string(model.RelOf(to, name))
	if err := t.writable(from, to); err != nil {
		return "", planErr(rel, err, "%v", err)
	}
	if err := moveNoReplace(t.Abs(rel), t.Abs(dst)); err != nil {
		switch {
		case errors.Is(err, fs.ErrExist):
			return "", planErr(rel, ErrDestExists, "%s already exists", dst)
		case errors.Is(err, fs.ErrNotExist):
			return "", planErr(rel, ErrNotFound, "not found")
		}
		return "", planErr(rel, err, "could not move to %s: %v", dst, errText(err))
	}
	failpoint(step)
	if lease != nil {
		t.dropMovedLeases(rel, name, lease)
	}
	ev.Slug, ev.From, ev.To = model.SlugOf(name), rel, dst
	t.appendEvent(ev)
	return dst, nil
}

// dropMovedLeases drops the lease of the plan that left rel, and a
// leftover ready-path lease of the claim that brought it there (its
// token), which must not hold the plan now it is going back.
func (t *Tree) dropMovedLeases(rel, name string, lease *model.Lease) {
	t.removeLeaseIf(rel, lease)
	for _, l := range []model.Lane{model.Bugs, model.Features} {
		if ready := t.ReadLease(string(model.RelOf(l, name))); ready != nil && ready.Token != "" && ready.Token == lease.Token {
			t.removeLeaseIf(string(l)+"/"+name, ready)
		}
	}
}

func (t *Tree) needPlan(rel string) (model.Lane, error) {
	lane, _, err := SplitRel(rel)
	if err != nil {
		return "", err
	}
	if fi, err := os.Lstat(t.Abs(rel)); err != nil || !fi.Mode().IsRegular() {
		return "", planErr(rel, ErrNotFound, "not found")
	}
	return lane, nil
}

// originLane is the ready lane a plan came from: the lease's origin, else the
// event that parked it, else fallback.
func (t *Tree) originLane(rel string, lease *model.Lease, fallback model.Lane) model.Lane {
	origin := ""
	if lease != nil {
		origin = lease.Origin
	}
	if origin == "" {
		origin = t.eventOrigin(rel)
	}
	laneName, _, _ := strings.Cut(origin, "/")
	if l, ok := model.ParseLane(laneName); ok && l.Ready() {
		return l
	}
	return fallback
}

// Release gives up a's claim on rel. An in-progress plan goes back to the
// lane it was claimed from (anchor leaves it stranded in in-progress); a
// ready-path lease is simply dropped. It returns where the plan is now.
// a.Reason, when given, goes to the event log (a worker that gives a plan
// back says why: stopped, or its agent could not start).
func (t *Tree) Release(rel string, a Actor) (string, error) {
	if err := t.refuse(rel); err != nil {
		return "", err
	}
	reason := a.Reason
	lane, name, err := SplitRel(rel)
	if err != nil {
		return "", err
	}
	if lane.Ready() {
		return t.releaseReady(rel, name, a)
	}
	if !model.RuleOf(model.Release).Takes(lane) {
		return "", wrongLane(rel, model.Release)
	}
	if _, err := t.needPlan(rel); err != nil {
		return "", err
	}
	return t.moveOwned(rel, func(lease *model.Lease) (model.Lane, error) {
		if lease == nil {
			return "", planErr(rel, ErrNoLease, "no lease (use return to send it back)")
		}
		return t.originLane(rel, lease, model.Features), nil
	}, a, "release:moved", Event{Event: "release", AgentID: a.AgentID, Reason: reason})
}

// releaseReady drops a's ready-path lease on rel: that is the whole
// release, even when its plan has since gone.
func (t *Tree) releaseReady(rel, name string, a Actor) (string, error) {
	unlock, err := t.lockLeases(lockWait)
	if err != nil {
		return "", planErr(rel, err, "%v", err)
	}
	defer unlock()
	lease, err := t.owned(rel, a)
	if err != nil {
		return "", err
	}
	if lease == nil {
		return "", planErr(rel, ErrNoLease, "no lease")
	}
	t.removeLeaseIf(rel, lease)
	t.appendEvent(Event{Event: "release", Slug: model.SlugOf(name), From: rel, To: rel, AgentID: a.AgentID, Reason: a.Reason})
	return rel, nil
}

// Recover takes over rel for a when its lease is expired, unreadable or
// missing, with a new token: a stopped holder that resumes finds its lease
// gone, even when it shares a's agent id. Exactly one of several racing
// recoverers wins. A ready plan's stale ready-path lease is cleared instead,
// making the plan claimable again. The plan's place is checked under the
// lease lock, so a plan that left in-progress meanwhile is never reported
// recovered.
func (t *Tree) Recover(rel string, a Actor, ttl float64) (*model.Lease, error) {
	lane, err := t.recoverable(rel, ttl)
	if err != nil {
		return nil, err
	}
	unlock, err := t.lockLeases(lockWait)
	if err != nil {
		return nil, planErr(rel, err, "%v", err)
	}
	defer unlock()
	failpoint("recover:locked")
	if _, err := t.needPlan(rel); err != nil {
		return nil, err
	}
	cur := t.ReadLease(rel)
	renew, err := t.recoverRefusal(rel, lane, cur, a)
	if renew {
		return t.renew(rel, a, ttl)
	}
	if err != nil {
		return nil, err
	}
	name := model.Rel(rel).Name()
	ev := Event{Event: "recover", Slug: model.SlugOf(name), From: rel, To: rel, AgentID: a.AgentID}
	if lane.Ready() {
		if !t.clearLease(rel, cur) {
			return nil, planErr(rel, ErrClaimed, "recovered by another worker")
		}
		t.appendEvent(ev)
		return nil, nil
	}
	return t.takeOver(rel, cur, a, ttl, ev)
}

// recoverable checks what Recover can tell before taking the lease lock:
// rel is a plan's path in a lane recover takes, and ttl is valid.
func (t *Tree) recoverable(rel string, ttl float64) (model.Lane, error) {
	if err := t.refuse(rel); err != nil {
		return "", err
	}
	lane, _, err := SplitRel(rel)
	if err != nil {
		return "", err
	}
	if !model.RuleOf(model.Recover).Takes(lane) {
		return "", wrongLane(rel, model.Recover)
	}
	if err := ValidTTL(ttl); err != nil {
		return "", planErr(rel, err, "%v", err)
	}
	return lane, nil
}

// recoverRefusal says why rel's lease cur may not be recovered now, or
// that a already holds it live (renew); nil and false let recover go on.
func (t *Tree) recoverRefusal(rel string, lane model.Lane, cur *model.Lease, a Actor) (renew bool, err error) {
	if err := inboxHolds(rel, cur); err != nil {
		return false, err
	}
	now := t.now()
	live := cur != nil && cur.Active(now)
	switch {
	case cur != nil && cur.Implausible(now) != "":
		// It cannot expire in time: take it over as if it had.
		return false, nil
	case live && a.holds(cur):
		return true, nil
	case live:
		return false, planErr(rel, ErrNotOwner, "owned by %s (lease active)", cur.AgentID)
	case cur != nil:
		return false, youngCorrupt(rel, cur, now)
	}
	return false, t.nothingToRecover(rel, lane)
}

// inboxHolds refuses a readable lease that waits in the inbox: only a
// decision and a resume take it up.
func inboxHolds(rel string, cur *model.Lease) error {
	switch {
	case cur == nil || cur.Corrupt != "" || cur.Awaiting == "":
		return nil
	case cur.Awaiting == model.AwaitApproval:
		return planErr(rel, ErrNotOwner, "awaiting approval in the inbox: approve or reject it")
	}
	return planErr(rel, ErrNotOwner, "%s: decided in the inbox, its agent's next --run resumes it (or a fit worker's, once it is gone)", cur.AgentID)
}

// youngCorrupt refuses an unreadable lease file that is still young:
// anchor writes leases in place, so it is likely one being written.
func youngCorrupt(rel string, cur *model.Lease, now float64) error {
	if cur.Corrupt != "" && now-cur.ModTime < unreadableGrace(cur) {
		return planErr(rel, ErrClaimed, "lease file is being written; try again in a minute")
	}
	return nil
}

// nothingToRecover refuses a plan without a lease: a ready plan has
// nothing to clear, and a plan being claimed right now is the claimer's.
func (t *Tree) nothingToRecover(rel string, lane model.Lane) error {
	if lane.Ready() {
		return planErr(rel, ErrNoLease, "no lease to recover")
	}
	if t.claimInFlight(model.Rel(rel).Name()) {
		return planErr(rel, ErrClaimed, "being claimed right now; try again in a minute")
	}
	return nil
}

// takeOver writes a's new lease over cur (nil when there was none), keeping
// the plan's origin, and records ev.
func (t *Tree) takeOver(rel string, cur *model.Lease, a Actor, ttl float64, ev Event) (*model.Lease, error) {
	origin := ""
	if cur != nil {
		origin = cur.Origin
		ev.Reason = "previous owner " + cur.AgentID
	}
	if origin == "" {
		origin = t.eventOrigin(rel)
	}
	next := t.newLease(rel, a.AgentID, origin, newToken(), ttl)
	var err error
	if cur == nil {
		err = t.linkLeaseExcl(rel, next) // a claimer's lease appearing now wins
	} else {
		err = t.writeLease(rel, next)
	}
	if errors.Is(err, fs.ErrExist) {
		return nil, planErr(rel, ErrClaimed, "taken by another worker")
	}
	if err != nil {
		return nil, planErr(rel, err, "cannot write lease: %v", errText(err))
	}
	ev.Origin = origin
	t.appendEvent(ev)
	return &next, nil
}

// Park sets a ready or claimed plan aside in ambiguous/ or blocked/.
func (t *Tree) Park(rel string, to model.Lane, a Actor) (string, error) {
	if err := t.refuse(rel); err != nil {
		return "", err
	}
	reason := a.Reason
	if why := model.RuleOf(model.Park).CheckTarget(to); why != "" {
		return "", planErr(rel, ErrBadTarget, "%s", why)
	}
	lane, err := t.needPlan(rel)
	if err != nil {
		return "", err
	}
	if !model.RuleOf(model.Park).Takes(lane) {
		return "", wrongLane(rel, model.Park)
	}
	ev := Event{Event: "park", AgentID: a.AgentID, Reason: reason}
	if lane.Ready() {
		ev.Origin = rel
	}
	return t.moveOwned(rel, func(*model.Lease) (model.Lane, error) { return to, nil }, a, "park:moved", ev)
}

// Return sends a parked or claimed plan back to a ready lane: to when given,
// else the lane it came from, else features.
func (t *Tree) Return(rel string, to model.Lane, a Actor) (string, error) {
	if err := t.refuse(rel); err != nil {
		return "", err
	}
	if why := model.RuleOf(model.Return).CheckTarget(to); to != "" && why != "" {
		return "", planErr(rel, ErrBadTarget, "%s", why)
	}
	lane, err := t.needPlan(rel)
	if err != nil {
		return "", err
	}
	switch {
	case lane.Ready():
		return "", planErr(rel, ErrWrongLane, "already ready")
	case !model.RuleOf(model.Return).Takes(lane):
		return "", wrongLane(rel, model.Return)
	}
	return t.moveOwned(rel, func(lease *model.Lease) (model.Lane, error) {
		if to != "" {
			return to, nil
		}
		return t.originLane(rel, lease, model.Features), nil
	}, a, "return:moved", Event{Event: "return", AgentID: a.AgentID})
}

// Complete moves a's claimed plan to completed/ (or review-needed/).
func (t *Tree) Complete(rel string, to model.Lane, a Actor) (string, error) {
	if err := t.refuse(rel); err != nil {
		return "", err
	}
	if why := model.RuleOf(model.Complete).CheckTarget(to); why != "" {
		return "", planErr(rel, ErrBadTarget, "%s", why)
	}
	lane, err := t.needPlan(rel)
	if err != nil {
		return "", err
	}
	if !model.RuleOf(model.Complete).Takes(lane) {
		return "", wrongLane(rel, model.Complete)
	}
	return t.moveOwned(rel, func(lease *model.Lease) (model.Lane, error) {
		if lease == nil && !a.Force {
			return "", planErr(rel, ErrNoLease, "no lease; recover it first, or force")
		}
		return to, nil
	}, a, "complete:moved", Event{Event: "complete", AgentID: a.AgentID})
}

// PromoteProblems lists what a draft lacks before agents should see it.
func PromoteProblems(h model.Header) []string {
	var out []string
	if len(h.Preferred) == 0 {
		out = append(out, "no `- **Preferred models:**` line, so every tier treats it as unknown fit")
	}
	if !h.HasDoneWhen {
		out = append(out, "no `## Done when` or acceptance section, so no one can tell when it is finished")
	}
	return out
}

// Promote moves a draft to a ready lane. It refuses, listing the problems,
// when the draft lacks Preferred models or a Done when section, or leaves
// its Goal or Done when empty (no agent would take it), unless force.
func (t *Tree) Promote(rel string, to model.Lane, a Actor) (string, []string, error) {
	if err := t.refuse(rel); err != nil {
		return "", nil, err
	}
	agent, force := a.AgentID, a.Force
	if why := model.RuleOf(model.Promote).CheckTarget(to); why != "" {
		return "", nil, planErr(rel, ErrBadTarget, "%s", why)
	}
	lane, err := t.needPlan(rel)
	if err != nil {
		return "", nil, err
	}
	if !model.RuleOf(model.Promote).Takes(lane) {
		return "", nil, wrongLane(rel, model.Promote)
	}
	data, err := readHead(t.Abs(rel))
	if err != nil {
		return "", nil, planErr(rel, err, "unreadable: %v", errText(err))
	}
	h := model.ParseHeader(data)
	problems := PromoteProblems(h)
	if _, why := h.BlankProblem(); why != "" {
		problems = append(problems, why)
	}
	if len(problems) > 0 && !force {
		return "", problems, planErr(rel, ErrNeedsForce, "not promoted: %s", strings.Join(problems, "; "))
	}
	dst, err := t.move(rel, to, "promote:moved", nil, Event{Event: "promote", AgentID: agent})
	return dst, problems, err
}

func readHead(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	text, _, err := headerText(f, make([]byte, HeaderLimit))
	return text, err
}

// wrongLane is the refusal of a plan in a lane verb does not take from.
func wrongLane(rel string, verb model.Verb) error {
	return planErr(rel, ErrWrongLane, "%s", model.RuleOf(verb).Done)
}
