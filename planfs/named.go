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
		l := t.ReadLease(rel)
		switch {
		case l == nil || l.Corrupt != "" || !l.Active(opt.Now):
			return c, "", planErr(rel, ErrNoLease, "no active lease; recover it explicitly")
		case l.AgentID != w.AgentID:
			return c, "", planErr(rel, ErrNotOwner, "owned by %s", l.AgentID)
		}
		held, err := t.Renew(rel, Agent(w.AgentID), ttl)
		if err != nil {
			return c, "", err
		}
		return Claimed{Rel: rel, Token: held.Token}, "", nil
	}
	if !lane.Ready() {
		return c, "", planErr(rel, ErrWrongLane, "plans in %s/ cannot be claimed", lane)
	}
	var row *model.Row
	rows := model.Decide(snap, w, opt)
	for i := range rows {
		if rows[i].Plan.Rel == rel {
			row = &rows[i]
		}
	}
	if row == nil {
		return c, "", planErr(rel, ErrUnreadable, "unreadable plan (see fleetwatch check)")
	}
	if row.Problem != "" {
		return c, "", planErr(rel, ErrUnclaimable, "%s", row.Problem)
	}
	h := row.Plan.Header
	if !h.AgentAssignable && !allowAssigned {
		return c, "", planErr(rel, ErrAssigned, "assigned to %s (a person's plan)", h.Assignee)
	}
	if !row.Deps.Met && !opt.NoDepCheck {
		return c, "", planErr(rel, ErrDepsUnmet, "deps UNMET: %s", model.UnmetList(row.Deps))
	}
	if !row.Fit.Eligible() && !opt.NoFitCheck {
		warning = fmt.Sprintf("%s is %s for %s (Preferred: %s)", rel, row.Fit, w.Tier, h.PreferredRaw)
	}
	c, err = t.ClaimHeld(rel, w.AgentID, ttl)
	return c, warning, err
}
