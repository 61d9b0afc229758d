package workers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// backendKeeper is a driver's lease held in a claims backend: the
// heartbeat renews it by compare-and-swap, and each heartbeat (and the
// end of the run) pushes the plan's feature branch, fenced by the lease
// (claims.Backend.PushBranch), so the next owner on another machine gets
// every commit and a holder that lost the lease never moves the branch.
type backendKeeper struct {
	b      claims.Backend
	held   claims.Held
	ttl    time.Duration
	every  time.Duration // the driver's renewal interval, TTL/3
	repo   string        // the project whose branch is pushed
	remote string        // the git remote it is pushed to
	tree   *planfs.Tree  // its event log hears of refused pushes
	log    *look.Log
	// base is the remote's feature branch as this holder last saw it:
	// where it started (seedFeature) or what it last pushed; "" when the
	// remote has none. A push moves the branch only from there.
	base      string
	baseKnown bool // base was read: a failed read is tried again at the next push
	// lost, once set, is why the lease is gone for good (a rejected
	// renewal or push, the deadline passed): from then on nothing is
	// pushed, renewed or completed.
	lost string
	// said is the last refused push the event log was told of, so a
	// push refused at every heartbeat is reported once; toldLost, that the
	// log said a lost lease left nothing unpushed.
	said     string
	toldLost bool
}

var _ Keeper = (*backendKeeper)(nil)

// deadline is when the holder must stop: TTL minus one heartbeat interval
// after its last successful renewal began, on the monotonic clock, so it
// stops before any observer may take the plan over.
func (k *backendKeeper) deadline() time.Time { return k.held.Renewed.Add(k.ttl - k.every) }

func (k *backendKeeper) Holds() bool { return k.lost == "" && time.Now().Before(k.deadline()) }

func (k *backendKeeper) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), max(k.every, 30*time.Second))
}

// fenced reports whether the lease is gone for good, making it so once the
// deadline has passed: a holder that may have been taken over never
// pushes, whatever the remote would still let it do.
func (k *backendKeeper) fenced() bool {
	if k.lost == "" && !time.Now().Before(k.deadline()) {
		k.lose(fmt.Sprintf("not renewed for %s (the lease's %s less one heartbeat): another machine may take it over", time.Since(k.held.Renewed).Round(time.Second), k.ttl))
	}
	return k.lost != ""
}

// lose makes the lease lost for good, saying why.
func (k *backendKeeper) lose(why string) {
	if k.lost == "" {
		k.lost = why
		k.logf("lease lost: %s; feature branch pushes stop", why)
	}
}

func (k *backendKeeper) Renew() (string, error) {
	if k.fenced() {
		return k.lost, nil
	}
	ctx, cancel := k.ctx()
	defer cancel()
	held, err := k.b.Renew(ctx, k.held, k.ttl)
	switch {
	case isLost(err):
		k.lose("renewal rejected: " + err.Error())
		return k.lost, nil
	case err != nil:
		return "", err
	}
	k.held = held
	k.push()
	return k.lost, nil
}

func (k *backendKeeper) Complete(to model.Lane) (string, error) {
	k.push()
	if k.fenced() {
		return "", fmt.Errorf("lease lost (%s): not completed, and %s not pushed", k.lost, tree.FeatureBranch(k.held.Slug))
	}
	ctx, cancel := k.ctx()
	defer cancel()
	return k.b.Complete(ctx, k.held, to)
}

// Park moves the plan to a parking lane and drops the lease in one step
// (MoveHeld), after pushing the branch while the lease holds: the agent's
// `park` through its driver, as the operator's verb does it.
func (k *backendKeeper) Park(to model.Lane, why string) (string, error) {
	k.push()
	if k.fenced() {
		return "", fmt.Errorf("lease lost (%s): not parked", k.lost)
	}
	ctx, cancel := k.ctx()
	defer cancel()
	return k.b.MoveHeld(ctx, k.held, to, k.held.Lease.AgentID, why)
}

// Release pushes the branch while the lease holds, then drops the lease by
// compare-and-swap: a lost one is refused there, harmlessly.
func (k *backendKeeper) Release(reason string) (string, error) {
	k.push()
	ctx, cancel := k.ctx()
	defer cancel()
	if err := k.b.Release(ctx, k.held, reason); err != nil {
		return "", err
	}
	return k.held.Rel, nil
}

// isLost is a backend's answer that the lease is no longer this holder's.
func isLost(err error) bool {
	return errors.Is(err, claims.ErrLost) || errors.Is(err, claims.ErrNoLease) || errors.Is(err, claims.ErrNotHolder)
}

// push sends feature/<slug> to the remote, fenced by the lease: only
// while it holds, only from base (never over anyone else's commits), only
// a fast-forward of base. A refused push is logged and told to the event
// log; a lost lease stops every later push.
func (k *backendKeeper) push() {
	branch := tree.FeatureBranch(k.held.Slug)
	ref := "refs/heads/" + branch
	tip, err := remoteGit(k.repo, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	switch {
	case k.fenced() && err == nil && tip != k.base:
		k.refused(branch, fmt.Sprintf("did not push %s (local tip %.12s, not on the remote): the lease is lost: %s", branch, tip, k.lost))
		return
	case k.fenced():
		if !k.toldLost {
			k.toldLost = true
			k.logf("did not push %s: the lease is lost: %s", branch, k.lost)
		}
		return
	case err != nil || tip == k.base:
		return // no branch made yet, or nothing new: nothing to push
	}
	if !k.learnBase(branch, ref, tip) || !k.fastForward(branch, tip) {
		return
	}
	k.pushTo(branch, ref, tip)
}

// learnBase reads the remote's branch as the base the first time: learnt
// now, it still fences, the push must be a fast-forward of it, so nothing
// anyone pushed is lost. False when it cannot be read (refused), or tip
// is there already.
func (k *backendKeeper) learnBase(branch, ref, tip string) bool {
	if k.baseKnown {
		return true
	}
	rb, err := readRemoteBranch(k.repo, k.remote, ref)
	if err != nil {
		k.refused(branch, fmt.Sprintf("push of %s failed, will retry: cannot read %s's: %v", branch, k.remote, err))
		return false
	}
	k.base, k.baseKnown = rb.oid, true
	return tip != k.base
}

// fastForward reports whether tip descends from the base (none: a new
// branch); a push that is not is refused.
func (k *backendKeeper) fastForward(branch, tip string) bool {
	if k.base == "" {
		return true
	}
	if _, err := remoteGit(k.repo, "merge-base", "--is-ancestor", k.base, tip); err != nil {
		k.refused(branch, fmt.Sprintf("did not push %s: its tip %.12s does not descend from %.12s, where the remote's was when this run last saw it (history rewritten?)", branch, tip, k.base))
		return false
	}
	return true
}

// pushTo is the fenced push itself, from base to tip.
func (k *backendKeeper) pushTo(branch, ref, tip string) {
	ctx, cancel := k.ctx()
	defer cancel()
	held, err := k.b.PushBranch(ctx, k.held, claims.BranchUpdate{Ref: ref, Old: k.base, New: tip})
	switch {
	case isLost(err):
		k.lose("push refused: " + err.Error())
		k.refused(branch, fmt.Sprintf("did not push %s (local tip %.12s): the lease is lost: %v", branch, tip, err))
	case errors.Is(err, claims.ErrBranchMoved):
		k.refused(branch, fmt.Sprintf("push of %s refused: someone else pushed there since this run last saw it at %s; their commits are kept, this run's are only local (tip %.12s): %v", branch, orNoBranch(k.base), tip, err))
	case err != nil:
		k.refused(branch, fmt.Sprintf("push of %s failed, will retry: %v", branch, err))
	default:
		k.held, k.base, k.said = held, tip, ""
		k.logf("pushed %s to %.12s", branch, tip)
	}
}

func orNoBranch(oid string) string {
	if oid == "" {
		return "no branch"
	}
	return fmt.Sprintf("%.12s", oid)
}

// refused logs why a push did not happen and tells the event log, once
// per distinct reason, so an operator sees it beside the plan.
func (k *backendKeeper) refused(branch, why string) {
	k.logf("%s", why)
	if why == k.said || k.tree == nil {
		return
	}
	k.said = why
	agent := k.held.Lease.AgentID
	k.tree.LogEvent(planfs.Event{Event: "push-refused", Slug: k.held.Slug, From: k.held.Rel, To: k.held.Rel, AgentID: agent, Reason: why})
}

func (k *backendKeeper) logf(format string, args ...any) {
	if k.log != nil {
		k.log.Printf(format, args...)
	}
}
