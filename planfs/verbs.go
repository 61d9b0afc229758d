package planfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

	"fleetwatch/model"
)

// Renew extends agent's own lease on rel by ttl seconds (the heartbeat).
// Unlike anchor it never creates a lease or takes over someone else's.
func (t *Tree) Renew(rel, agent string, ttl float64) (*model.Lease, error) {
	if _, _, err := SplitRel(rel); err != nil {
		return nil, err
	}
	cur := t.LeaseFor(rel)
	switch {
	case cur == nil:
		return nil, planErr(rel, ErrNoLease, "no lease to renew")
	case cur.Corrupt != "":
		return nil, planErr(rel, ErrNoLease, "lease file is unreadable (%s)", cur.Corrupt)
	case cur.AgentID != agent:
		return nil, planErr(rel, ErrNotOwner, "lease held by %s, not %s", cur.AgentID, agent)
	}
	next := *cur
	next.ExpiresAt = t.now() + max(1, ttl)
	if err := t.writeLease(rel, next); err != nil {
		return nil, planErr(rel, err, "cannot write lease: %v", errText(err))
	}
	return &next, nil
}

// owned checks that agent may act on rel's lease: its own, or any with force.
// An in-progress plan with no lease at all is free to anyone, as in anchor.
func (t *Tree) owned(rel, agent string, force bool) (*model.Lease, error) {
	cur := t.LeaseFor(rel)
	if cur == nil || force {
		return cur, nil
	}
	if cur.Corrupt != "" {
		return nil, planErr(rel, ErrNotOwner, "lease file is unreadable (%s); use --force or recover", cur.Corrupt)
	}
	if cur.AgentID != agent {
		if !cur.Active(t.now()) {
			return nil, planErr(rel, ErrNotOwner, "owned by %s (lease expired; recover it first, or --force)", cur.AgentID)
		}
		return nil, planErr(rel, ErrNotOwner, "owned by %s (--force overrides)", cur.AgentID)
	}
	return cur, nil
}

// move relocates a plan to lane without overwriting and logs it; it then
// drops lease, when given, if nobody replaced it meanwhile.
func (t *Tree) move(rel string, to model.Lane, step string, lease *model.Lease, ev Event) (string, error) {
	_, name, err := SplitRel(rel)
	if err != nil {
		return "", err
	}
	dst := string(to) + "/" + name
	if err := os.MkdirAll(t.Abs(string(to)), 0o755); err != nil {
		return "", planErr(rel, err, "cannot create %s/: %v", to, errText(err))
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
		t.removeLeaseIf(rel, lease)
	}
	ev.Slug, ev.From, ev.To = model.SlugOf(name), rel, dst
	t.appendEvent(ev)
	return dst, nil
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

// Release gives up agent's claim on rel. An in-progress plan goes back to the
// lane it was claimed from (anchor leaves it stranded in in-progress); a
// ready-path lease is simply dropped. It returns where the plan is now.
func (t *Tree) Release(rel, agent string, force bool) (string, error) {
	lane, name, err := SplitRel(rel)
	if err != nil {
		return "", err
	}
	if lane.Ready() {
		// A ready-path lease: dropping it is the whole release, even when
		// its plan has since gone.
		lease, err := t.owned(rel, agent, force)
		if err != nil {
			return "", err
		}
		if lease == nil {
			return "", planErr(rel, ErrNoLease, "no lease")
		}
		t.removeLeaseIf(rel, lease)
		t.appendEvent(Event{Event: "release", Slug: model.SlugOf(name), From: rel, To: rel, AgentID: agent})
		return rel, nil
	}
	if lane != model.InProgress {
		return "", planErr(rel, ErrBadTarget, "only claimed plans can be released")
	}
	if _, err := t.needPlan(rel); err != nil {
		return "", err
	}
	lease, err := t.owned(rel, agent, force)
	if err != nil {
		return "", err
	}
	if lease == nil {
		return "", planErr(rel, ErrNoLease, "no lease (use return to send it back)")
	}
	return t.move(rel, t.originLane(rel, lease, model.Features), "release:moved", lease,
		Event{Event: "release", AgentID: agent, Origin: lease.Origin})
}

// Recover takes over rel for agent when its lease is expired, unreadable or
// missing. Exactly one of several racing recoverers wins. A ready plan's stale
// ready-path lease is cleared instead, making the plan claimable again.
func (t *Tree) Recover(rel, agent string, ttl float64) (*model.Lease, error) {
	lane, err := t.needPlan(rel)
	if err != nil {
		return nil, err
	}
	if lane != model.InProgress && !lane.Ready() {
		return nil, planErr(rel, ErrBadTarget, "only in-progress plans and ready-path leases can be recovered")
	}
	cur := t.LeaseFor(rel)
	if cur != nil && cur.Active(t.now()) {
		if cur.AgentID == agent {
			return t.Renew(rel, agent, ttl)
		}
		return nil, planErr(rel, ErrNotOwner, "owned by %s (lease active)", cur.AgentID)
	}
	if lane.Ready() {
		if cur == nil {
			return nil, planErr(rel, ErrNoLease, "no lease to recover")
		}
		if !t.clearLease(rel, cur) {
			return nil, planErr(rel, ErrClaimed, "recovered by another worker")
		}
		t.appendEvent(Event{Event: "recover", Slug: model.SlugOf(rel[len(lane)+1:]), From: rel, To: rel, AgentID: agent})
		return nil, nil
	}
	unlock, err := t.lockLease(rel)
	if err != nil {
		return nil, err
	}
	defer unlock()
	failpoint("recover:locked")
	// Under the lock, the lease must still be the one judged stale above.
	again := t.LeaseFor(rel)
	if (again == nil) != (cur == nil) || again != nil && !sameLeaseAs(again, cur) {
		return nil, planErr(rel, ErrClaimed, "recovered by another worker")
	}
	origin := ""
	if cur != nil {
		origin = cur.Origin
	}
	if origin == "" {
		origin = t.eventOrigin(rel)
	}
	next := t.newLease(rel, agent, origin, newToken(), ttl)
	if err := t.writeLease(rel, next); err != nil {
		return nil, planErr(rel, err, "cannot write lease: %v", errText(err))
	}
	prev := ""
	if cur != nil {
		prev = cur.AgentID
	}
	t.appendEvent(Event{Event: "recover", Slug: model.SlugOf(rel[len(lane)+1:]), From: rel, To: rel, AgentID: agent, Origin: origin, Reason: "previous owner " + prev})
	return &next, nil
}

// Park sets a ready or claimed plan aside in ambiguous/ or blocked/.
func (t *Tree) Park(rel string, to model.Lane, agent, reason string, force bool) (string, error) {
	if !to.Parked() {
		return "", planErr(rel, ErrBadTarget, "park target must be ambiguous or blocked, not %s", to)
	}
	lane, err := t.needPlan(rel)
	if err != nil {
		return "", err
	}
	if !lane.Ready() && lane != model.InProgress {
		return "", planErr(rel, ErrBadTarget, "only plans in bugs/, features/ or in-progress/ can be parked")
	}
	lease, err := t.owned(rel, agent, force)
	if err != nil {
		return "", err
	}
	origin := rel
	if lane == model.InProgress {
		origin = ""
		if lease != nil {
			origin = lease.Origin
		}
	}
	return t.move(rel, to, "park:moved", lease, Event{Event: "park", AgentID: agent, Origin: origin, Reason: reason})
}

// Return sends a parked or claimed plan back to a ready lane: to when given,
// else the lane it came from, else features.
func (t *Tree) Return(rel string, to model.Lane, agent string, force bool) (string, error) {
	if to != "" && !to.Ready() {
		return "", planErr(rel, ErrBadTarget, "return target must be bugs or features, not %s", to)
	}
	lane, err := t.needPlan(rel)
	if err != nil {
		return "", err
	}
	var lease *model.Lease
	switch {
	case lane.Ready():
		return "", planErr(rel, ErrBadTarget, "already ready")
	case lane == model.InProgress:
		if lease, err = t.owned(rel, agent, force); err != nil {
			return "", err
		}
	case !lane.Parked():
		return "", planErr(rel, ErrBadTarget, "only parked or claimed plans can be returned")
	}
	if to == "" {
		to = t.originLane(rel, lease, model.Features)
	}
	return t.move(rel, to, "return:moved", lease, Event{Event: "return", AgentID: agent})
}

// Complete moves agent's claimed plan to completed/ (or review-needed/).
func (t *Tree) Complete(rel string, to model.Lane, agent string, force bool) (string, error) {
	if to != model.Completed && to != model.ReviewNeeded {
		return "", planErr(rel, ErrBadTarget, "complete target must be completed or review-needed, not %s", to)
	}
	lane, err := t.needPlan(rel)
	if err != nil {
		return "", err
	}
	if lane != model.InProgress {
		return "", planErr(rel, ErrBadTarget, "only in-progress plans can be completed")
	}
	lease, err := t.owned(rel, agent, force)
	if err != nil {
		return "", err
	}
	if lease == nil && !force {
		return "", planErr(rel, ErrNoLease, "no lease; recover it first or use --force")
	}
	return t.move(rel, to, "complete:moved", lease, Event{Event: "complete", AgentID: agent})
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
// when the draft lacks Preferred models or a Done when section, unless force.
func (t *Tree) Promote(rel string, to model.Lane, agent string, force bool) (string, []string, error) {
	if !to.Ready() {
		return "", nil, planErr(rel, ErrBadTarget, "promote target must be bugs or features, not %s", to)
	}
	lane, err := t.needPlan(rel)
	if err != nil {
		return "", nil, err
	}
	if lane != model.Drafts {
		return "", nil, planErr(rel, ErrBadTarget, "only drafts can be promoted")
	}
	data, err := readHead(t.Abs(rel))
	if err != nil {
		return "", nil, planErr(rel, err, "unreadable: %v", errText(err))
	}
	problems := PromoteProblems(model.ParseHeader(data))
	if len(problems) > 0 && !force {
		return "", problems, planErr(rel, ErrNeedsForce, "not promoted: %s (--force promotes anyway)", strings.Join(problems, "; "))
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
	buf := make([]byte, HeaderLimit)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return "", err
	}
	return strings.ToValidUTF8(string(buf[:n]), "\uFFFD"), nil
}
