package planfs

import (
	"fmt"
	"strings"

	"github.com/fleetwatch/fleetwatch/model"
)

// ResolveNamed finds the plan a named claim of slug by agent means, as anchor
// does: agent's own active in-progress plan of that name, else the one ready
// plan of that name. Several ready ones are ambiguous.
func ResolveNamed(snap *model.Snapshot, slug, agent string, now float64) (string, error) {
	var hits []string
	for i := range snap.Plans {
		p := &snap.Plans[i]
		if p.Slug != slug {
			continue
		}
		switch {
		case p.Lane == model.InProgress:
			if l := snap.LeaseFor(p.Rel); l != nil && l.Active(now) && l.AgentID == agent {
				return p.Rel, nil
			}
		case p.Lane.Ready():
			hits = append(hits, p.Rel)
		}
	}
	switch len(hits) {
	case 0:
		return "", planErr(slug, ErrNotFound, "no ready plan of that name (and none in progress for %s)", agent)
	case 1:
		return hits[0], nil
	}
	return "", planErr(slug, ErrAmbiguous, "ambiguous: %s", strings.Join(hits, ", "))
}

// ClaimNamed claims the plan at rel for w with anchor's named-target checks,
// or resumes it when it is w's own in-progress plan (renewing the lease and
// taking on its token). A
// person's plan (unless allowAssigned) and unmet dependencies (unless
// opt.NoDepCheck) refuse; a fit mismatch only comes back as a warning.
func (t *Tree) ClaimNamed(snap *model.Snapshot, rel string, w model.Worker, opt model.Options, allowAssigned bool, ttl float64) (c Claimed, warning string, err error) {
	if err := t.refuse(rel); err != nil {
		return c, "", err
	}
	lane, _, err := SplitRel(rel)
	if err != nil {
		return c, "", err
	}
	if lane == model.InProgress {
		c, err := t.resumeNamed(rel, w, opt.Now, ttl)
		return c, "", err
	}
	if !lane.Ready() {
		return c, "", planErr(rel, ErrWrongLane, "plans in %s/ cannot be claimed", lane)
	}
	row, err := namedRow(snap, rel, w, opt, allowAssigned)
	if err != nil {
		return c, "", err
	}
	if !row.Fit.Eligible() && !opt.NoFitCheck {
		warning = fmt.Sprintf("%s is %s for %s (Preferred: %s)", rel, row.Fit, w.Tier, row.Plan.Header.PreferredRaw)
	}
	c, err = t.ClaimHeld(rel, w.AgentID, ttl)
	return c, warning, err
}

// resumeNamed takes up w's own in-progress plan at rel: its live lease
// renewed, its token taken on.
func (t *Tree) resumeNamed(rel string, w model.Worker, now, ttl float64) (Claimed, error) {
	l := t.ReadLease(rel)
	switch {
	case l == nil || l.Corrupt != "" || !l.Active(now):
		return Claimed{}, planErr(rel, ErrNoLease, "no active lease; recover it explicitly")
	case l.AgentID != w.AgentID:
		return Claimed{}, planErr(rel, ErrNotOwner, "owned by %s", l.AgentID)
	}
	held, err := t.Renew(rel, Agent(w.AgentID), ttl)
	if err != nil {
		return Claimed{}, err
	}
	return Claimed{Rel: rel, Token: held.Token}, nil
}

// namedRow is the ready plan at rel as Decide sees it for w, or why a
// named claim may not take it: unreadable, unclaimable, a person's plan
// (unless allowAssigned), or its dependencies unmet (unless
// opt.NoDepCheck).
func namedRow(snap *model.Snapshot, rel string, w model.Worker, opt model.Options, allowAssigned bool) (*model.Row, error) {
	var row *model.Row
	rows := model.Decide(snap, w, opt)
	for i := range rows {
		if rows[i].Plan.Rel == rel {
			row = &rows[i]
		}
	}
	if row == nil {
		return nil, planErr(rel, ErrUnreadable, "unreadable plan (see fleetwatch check)")
	}
	if row.Problem != "" {
		return nil, planErr(rel, ErrUnclaimable, "%s", row.Problem)
	}
	h := row.Plan.Header
	if !h.AgentAssignable && !allowAssigned {
		return nil, planErr(rel, ErrAssigned, "assigned to %s (a person's plan)", h.Assignee)
	}
	if !row.Deps.Met && !opt.NoDepCheck {
		return nil, planErr(rel, ErrDepsUnmet, "deps UNMET: %s", model.UnmetList(row.Deps))
	}
	return row, nil
}
