package planfs

import (
	"errors"
	"io/fs"
	"os"

	"github.com/fleetwatch/fleetwatch/model"
)

// claim moves a ready plan to in-progress/ for agent under a lease with
// token and returns its new rel.
//
// The protocol: create the ready-path lease with O_EXCL (anchor's exclusion
// step), move the plan without ever overwriting, write the in-progress lease
// atomically and exclusively, drop the ready-path lease. Of any number of racing claimers,
// tools or processes, exactly one gets past the O_EXCL create or the move.
// A claimer killed at any step leaves a state that Repair finishes or undoes.
func (t *Tree) claim(rel, agent, token string, ttl float64) (string, error) {
	if err := t.refuse(rel); err != nil {
		return "", err
	}
	lane, name, dst, err := t.claimable(rel, agent, ttl)
	if err != nil {
		return "", err
	}
	ready := t.newLease(rel, agent, "", token, ttl)
	if err := t.acquireReadyLease(rel, agent, ready); err != nil {
		return "", err
	}
	// A plan of the same name in the other ready lane shares in-progress/<name>.
	// anchor's move overwrites, so hold that lane's lease too: then neither
	// tool can move its twin while we move ours.
	twin := twinRel(lane, name)
	var twinLease model.Lease
	if t.exists(twin) {
		twinLease = t.newLease(twin, agent, "", token, ttl)
		if err := t.acquireReadyLease(twin, agent, twinLease); err != nil {
			t.dropOwnLease(rel, &ready)
			return "", planErr(rel, ErrClaimed, "its twin %s is being claimed", twin)
		}
		defer t.dropOwnLease(twin, &twinLease)
	}
	failpoint("claim:ready-lease")

	if _, err := t.laneDir(model.InProgress); err != nil {
		t.dropOwnLease(rel, &ready)
		return "", planErr(rel, err, "%v", err)
	}
	if err := moveNoReplace(t.Abs(rel), t.Abs(dst)); err != nil {
		t.dropOwnLease(rel, &ready)
		switch {
		case errors.Is(err, fs.ErrExist):
			return "", planErr(rel, ErrDestExists, "%s already exists", dst)
		case errors.Is(err, fs.ErrNotExist):
			return "", planErr(rel, ErrClaimed, "taken by another worker")
		}
		return "", planErr(rel, err, "could not move: %v", errText(err))
	}
	failpoint("claim:moved")

	held := t.newLease(dst, agent, rel, token, ttl)
	held.ClaimedAt, held.ExpiresAt = ready.ClaimedAt, ready.ExpiresAt
	if err := t.claimLease(rel, dst, held); err != nil {
		if !t.exists(dst) {
			// Taken on before our lease: nothing of ours is left to hold.
			t.dropOwnLease(rel, &ready)
			return "", err
		}
		// The plan is moved and our ready-path lease stays (the lease lock
		// was busy, or another holds dst): once this process is gone,
		// Repair undoes or finishes the claim.
		return dst, err
	}
	failpoint("claim:lease")
	t.dropOwnLease(rel, &ready)
	t.appendEvent(Event{Event: "claim", Slug: model.SlugOf(name), From: rel, To: dst, AgentID: agent, Origin: rel})
	return dst, nil
}

// claimable checks, before any change, that agent may claim rel: a ready
// plan there, a name its leases can carry, no plan of that name in
// in-progress/, a valid TTL and no symlink on the way (a refused claim
// claims nothing). It returns the plan's lane and name and where it goes.
func (t *Tree) claimable(rel, agent string, ttl float64) (model.Lane, string, string, error) {
	lane, name, err := SplitRel(rel)
	if err != nil {
		return "", "", "", err
	}
	if !model.RuleOf(model.Claim).Takes(lane) {
		return "", "", "", wrongLane(rel, model.Claim)
	}
	if fi, err := os.Lstat(t.Abs(rel)); err != nil || !fi.Mode().IsRegular() {
		return "", "", "", planErr(rel, ErrNotFound, "not found")
	}
	// A name too long for its in-progress lease would otherwise strand the
	// plan after its move.
	if why := model.ClaimProblem(&model.Plan{Name: name}, false); why != "" {
		return "", "", "", planErr(rel, ErrUnclaimable, "%s", why)
	}
	dst := string(model.RelOf(model.InProgress, name))
	if t.exists(dst) {
		return "", "", "", t.destTaken(rel, dst, agent)
	}
	if err := ValidTTL(ttl); err != nil {
		return "", "", "", planErr(rel, err, "%v", err)
	}
	// The plan's own lane counts too: a move out of a symlinked one takes a
	// file from elsewhere.
	if err := t.writable(lane, model.InProgress); err != nil {
		return "", "", "", planErr(rel, err, "%v", err)
	}
	return lane, name, dst, nil
}

// destTaken refuses claiming rel when in-progress/ already holds dst: by
// the agent other than agent that holds it, when one does.
func (t *Tree) destTaken(rel, dst, agent string) error {
	// A racing winner holds the ready-path lease from before its move
	// until its in-progress lease is written: either says who has it.
	for _, held := range []string{dst, rel} {
		if l := t.ReadLease(held); l != nil && l.Active(t.now()) && l.AgentID != agent {
			return planErr(rel, ErrClaimed, "%s already held by %s", dst, l.AgentID)
		}
	}
	return planErr(rel, ErrDestExists, "%s already exists", dst)
}

// acquireReadyLease takes rel's ready-path lease for agent, clearing an
// expired one first.
func (t *Tree) acquireReadyLease(rel, agent string, l model.Lease) error {
	for attempt := 0; attempt < 2; attempt++ {
		err := t.createLeaseExcl(rel, l)
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return planErr(rel, err, "cannot write lease: %v", errText(err))
		}
		cur := t.ReadLease(rel)
		switch {
		case cur == nil:
			continue // gone between our create and read: try again
		case cur.Corrupt != "":
			if t.now()-cur.ModTime < claimGrace {
				return planErr(rel, ErrClaimed, "being claimed by another worker")
			}
			return planErr(rel, ErrClaimed, "lease file is unreadable (%s); `fleetwatch recover %s` clears it", cur.Corrupt, rel)
		case cur.Active(t.now()) && !t.abandoned(cur):
			// Even our own agent id: two workers may share one, and only a
			// claimer that is gone may have its lease cleared.
			return planErr(rel, ErrClaimed, "already claimed by %s", cur.AgentID)
		}
		// Expired, or left by a claimer that is gone.
		if !t.clearLease(rel, cur) {
			return planErr(rel, ErrClaimed, "taken by another worker")
		}
	}
	return planErr(rel, ErrClaimed, "could not claim (race)")
}

// twinRel is the same file name in the other ready lane.
func twinRel(lane model.Lane, name string) string {
	if lane == model.Bugs {
		return string(model.RelOf(model.Features, name))
	}
	return string(model.RelOf(model.Bugs, name))
}

// claimLease installs the claim's in-progress lease under the lease lock, so
// a verb that found the plan unleased cannot move it between our move and
// our lease, and checks the plan is still there.
func (t *Tree) claimLease(rel, dst string, held model.Lease) error {
	unlock, err := t.lockLeases(lockWait)
	if err != nil {
		return planErr(dst, err, "claimed but could not write its lease: %v", err)
	}
	defer unlock()
	if !t.exists(dst) {
		return planErr(rel, ErrClaimed, "taken over while being claimed")
	}
	err = t.installClaimLease(dst, held)
	if err != nil && !errors.Is(err, ErrClaimed) {
		// Our own lease could not be written (a full disk, no permission):
		// nobody holds the plan, so put it back now, under the lock no
		// verb moves it without, rather than leave it to a later repair.
		if moveNoReplace(t.Abs(dst), t.Abs(rel)) == nil {
			return planErr(rel, unwrapPlanErr(err), "claim undone: could not write the lease of %s: %v", dst, errText(unwrapPlanErr(err)))
		}
	}
	return err
}

// unwrapPlanErr is the cause inside a PlanError, or err itself.
func unwrapPlanErr(err error) error {
	if pe, ok := err.(*PlanError); ok {
		return pe.Err
	}
	return err
}

// installClaimLease writes the in-progress lease of a plan just moved there.
// It never overwrites a live lease taken since the move began: that means
// someone else believes they hold this plan, which must not pass silently.
func (t *Tree) installClaimLease(dst string, held model.Lease) error {
	for attempt := 0; attempt < 2; attempt++ {
		err := t.linkLeaseExcl(dst, held)
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return planErr(dst, err, "claimed but could not write its lease: %v", errText(err))
		}
		cur := t.ReadLease(dst)
		switch {
		case cur == nil:
			continue
		case cur.Corrupt == "" && cur.Token == held.Token:
			return nil // Repair finished our claim for us meanwhile
		case cur.Corrupt == "" && cur.Active(t.now()) && cur.ClaimedAt >= held.ClaimedAt,
			cur.Corrupt != "" && t.now()-cur.ModTime < unreadableGrace(cur):
			return planErr(dst, ErrClaimed, "lease race: %s is already leased to %s", dst, cur.AgentID)
		}
		// Expired, long unreadable, or claimed before this plan was moved in:
		// a lease left from an earlier plan of the same name.
		t.clearLease(dst, cur)
	}
	return planErr(dst, ErrClaimed, "lease race on %s", dst)
}
