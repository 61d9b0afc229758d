package claims

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// Local is the tree's own lease files as a Backend, so every face can
// call the same verbs whichever backend keeps the claims. Each verb is
// planfs's own (its protocol, its failpoints, its event log and its
// typed errors, which the errors here wrap). What really differs from a
// remote stays here: a claimed plan moves to in-progress/ (Held.Rel is
// its rel there), and a lease's Version is its fencing token, which
// planfs checks under its lease lock.
type Local struct {
	Tree *planfs.Tree
	// Seconds, when set, is every new lease's life instead of the verb's
	// ttl: a lease file takes any life planfs does, beyond what a
	// time.Duration holds (1e12 s) and below its nanosecond.
	Seconds float64
}

// seconds is the life a lease asked for ttl gets.
func (l *Local) seconds(ttl time.Duration) float64 {
	if l.Seconds != 0 {
		return l.Seconds
	}
	return ttl.Seconds()
}

// NewLocal is the local backend over t.
func NewLocal(t *planfs.Tree) *Local { return &Local{Tree: t} }

var _ Backend = (*Local)(nil)

func (l *Local) Name() string { return "local" }

func (l *Local) Close() error { return nil }

// View is a scan of the tree (ViewOf).
func (l *Local) View(context.Context) (*View, error) {
	snap, err := l.Tree.Scan()
	if err != nil {
		return nil, err
	}
	return l.ViewOf(snap), nil
}

// ViewOf is snap, a scan of the tree (the board a face showed), as a
// View. Each lease's Origin in it is where its plan is now
// (in-progress/), as on a remote's integration branch: the verbs move it
// from there.
func (l *Local) ViewOf(snap *model.Snapshot) *View {
	now := l.Tree.NowSeconds()
	out := *snap
	out.Leases = make([]model.Lease, len(snap.Leases))
	v := &View{Snapshot: &out, ReadAt: time.Now()}
	for i, ls := range snap.Leases {
		ls.Origin = ls.Rel
		out.Leases[i] = ls
		if ls.Corrupt != "" || model.Rel(ls.Rel).Lane() != model.InProgress {
			continue
		}
		v.Leases = append(v.Leases, Remote{Lease: ls, Slug: model.SlugOf(model.Rel(ls.Rel).Name()), Version: ls.Token, Live: ls.Active(now)})
	}
	return v
}

// Claim moves rel, a ready plan, to in-progress/ under a new lease. A plan
// claimed (or gone, or its place in in-progress/ taken) since v was read
// is ErrLost.
func (l *Local) Claim(_ context.Context, _ *View, rel string, h Holder, ttl time.Duration) (Held, error) {
	c, err := l.Tree.ClaimHeld(rel, h.AgentID, l.seconds(ttl))
	if errors.Is(err, planfs.ErrClaimed) || errors.Is(err, planfs.ErrDestExists) || errors.Is(err, planfs.ErrNotFound) {
		return Held{}, lostError{err}
	}
	if err != nil {
		return Held{}, err
	}
	return l.held(c.Rel, c.Token)
}

// held is the lease on rel as it now stands, which must carry token.
func (l *Local) held(rel, token string) (Held, error) {
	ls := l.Tree.ReadLease(rel)
	if ls == nil || ls.Token != token {
		return Held{}, fmt.Errorf("%s: %w", rel, ErrLost)
	}
	return Held{Slug: model.SlugOf(model.Rel(rel).Name()), Rel: rel, Lease: *ls, Version: ls.Token, Renewed: time.Now()}, nil
}

// actor is held's holder, proving it with the lease's token.
func actor(held Held) planfs.Actor {
	return planfs.Actor{AgentID: held.Lease.AgentID, Token: held.Lease.Token}
}

// lostIf marks a refusal that means the lease is no longer held's as
// ErrLost, keeping planfs's error and its words.
func lostIf(err error) error {
	if errors.Is(err, planfs.ErrNotOwner) || errors.Is(err, planfs.ErrNoLease) || errors.Is(err, planfs.ErrNotFound) {
		return lostError{err}
	}
	return err
}

// lostError is planfs's refusal, read as ErrLost by the faces that ask a
// Backend.
type lostError struct{ err error }

func (e lostError) Error() string        { return e.err.Error() }
func (e lostError) Unwrap() error        { return e.err }
func (e lostError) Is(target error) bool { return target == ErrLost }

func (l *Local) Renew(_ context.Context, held Held, ttl time.Duration) (Held, error) {
	renewed := time.Now()
	ls, err := l.Tree.Renew(held.Rel, actor(held), l.seconds(ttl))
	if err != nil {
		return Held{}, lostIf(err)
	}
	held.Lease, held.Version, held.Renewed = *ls, ls.Token, renewed
	return held, nil
}

// TakeOver is planfs's recover: an expired lease (or an implausible one)
// becomes h's, under a new token. A lease the view does not show (a
// corrupt file, a ready plan's stale ready-path lease) is planfs's to
// judge at the plan's place; a ready plan's is cleared, and the Held
// returned then carries no lease (Version "").
func (l *Local) TakeOver(_ context.Context, v *View, slug string, h Holder, ttl time.Duration) (Held, error) {
	rel := v.PlanRel(slug)
	if r := v.Lease(slug); r != nil {
		rel = r.Rel
	}
	if rel == "" {
		return Held{}, fmt.Errorf("%s: %w", slug, ErrNoLease)
	}
	ls, err := l.Tree.Recover(rel, planfs.Agent(h.AgentID), l.seconds(ttl))
	if errors.Is(err, planfs.ErrClaimed) {
		return Held{}, lostError{err}
	}
	if err != nil {
		return Held{}, err
	}
	if ls == nil {
		return Held{Slug: slug, Rel: rel}, nil
	}
	return l.held(rel, ls.Token)
}

// Release gives the plan back to the lane it was claimed from.
func (l *Local) Release(_ context.Context, held Held, reason string) error {
	_, err := l.releaseTree(held.Rel, actor(held).Because(reason))
	return err
}

// releaseTree is planfs's release of rel by a; it returns where the plan
// went back to.
func (l *Local) releaseTree(rel string, a planfs.Actor) (string, error) {
	dst, err := l.Tree.Release(rel, a)
	return dst, lostIf(err)
}

// moveTree is the planfs verb that sends rel to lane to (complete, park,
// promote, else return; "" is the lane planfs says it came from) and drops
// its lease in the same step, by a.
func (l *Local) moveTree(rel string, to model.Lane, a planfs.Actor) (string, error) {
	if to == model.Completed || to == model.ReviewNeeded {
		dst, err := l.Tree.Complete(rel, to, a)
		return dst, lostIf(err)
	}
	dst, err := l.move(rel, to, a)
	return dst, lostIf(err)
}

func (l *Local) Complete(_ context.Context, held Held, to model.Lane) (string, error) {
	dst, err := l.Tree.Complete(held.Rel, to, actor(held))
	return dst, lostIf(err)
}

// MovePlan moves a plan no lease holds: promote from drafts/, park to a
// parking lane, else return.
func (l *Local) MovePlan(_ context.Context, rel string, to model.Lane, by, why string) (string, error) {
	return l.move(rel, to, planfs.Agent(by).Because(why))
}

// MoveHeld moves held's plan and drops its lease in the same planfs verb,
// fenced by its token; by, when not its holder, acts by force.
func (l *Local) MoveHeld(_ context.Context, held Held, to model.Lane, by, why string) (string, error) {
	a := planfs.Actor{AgentID: by, Token: held.Lease.Token, Force: by != held.Lease.AgentID}.Because(why)
	if to == model.Completed {
		dst, err := l.Tree.Complete(held.Rel, to, a)
		return dst, lostIf(err)
	}
	dst, err := l.move(held.Rel, to, a)
	return dst, lostIf(err)
}

// move is the planfs verb that sends rel to lane to.
func (l *Local) move(rel string, to model.Lane, a planfs.Actor) (string, error) {
	switch {
	case model.Rel(rel).Lane() == model.Drafts:
		dst, _, err := l.Tree.Promote(rel, to, a)
		return dst, err
	case to.Parked():
		return l.Tree.Park(rel, to, a)
	}
	return l.Tree.Return(rel, to, a)
}

// PushBranch moves the project's own branch ref (there is no remote to
// push to) by compare-and-swap, as the driver does after a turn, only
// while held's lease is still its.
func (l *Local) PushBranch(ctx context.Context, held Held, u BranchUpdate) (Held, error) {
	cur, err := l.held(held.Rel, held.Lease.Token)
	if err != nil {
		return Held{}, err
	}
	if !cur.Lease.Active(l.Tree.NowSeconds()) {
		return Held{}, fmt.Errorf("%s: lease expired: %w", held.Rel, ErrLost)
	}
	if _, err := gitenv.Run(ctx, gitenv.Call{Dir: l.Tree.Project, Args: []string{"update-ref", u.Ref, u.New, u.Old}}); err != nil {
		return Held{}, fmt.Errorf("%s: %v: %w", u.Ref, err, ErrBranchMoved)
	}
	cur.Renewed = held.Renewed
	return cur, nil
}
