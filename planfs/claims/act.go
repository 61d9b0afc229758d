package claims

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// Op is one operator verb (promote, park, return, release, recover,
// complete) on a plan whose claims a backend keeps. Every face (the CLI's
// verbs, work-once's --park and --release, the UI) hands its verb to Act,
// so they cannot disagree on the steps or their order.
type Op struct {
	Verb model.Verb
	Slug string
	// To is where the plan goes; "" is the verb's default (complete:
	// completed; return: the ready lane a leased plan never left, else
	// features; over the lease files, the lane planfs's event log says it
	// came from). Park and promote need one.
	To model.Lane
	// Holder is who acts: Holder.AgentID is the operator or agent, and the
	// lease recover takes over (or a move's own lease, see Act) is theirs.
	Holder Holder
	// Token, when set, must be the lease's: a holder naming its own lease.
	Token string
	Why   string
	// Force acts over someone else's lease.
	Force bool
	// TTL is recover's new lease's lifetime.
	TTL time.Duration
}

// Result is what Act did.
type Result struct {
	// Rel is where the plan is now on the integration branch.
	Rel string
	// Dropped is the lease the verb dropped or took over; nil when none.
	Dropped *Remote
	// Holds is the lease recover took over; nil when it took none (the
	// lease files' recover of a ready plan only clears its stale lease).
	Holds *Held
	// Freed says the verb only dropped a lease and left the plan free in
	// the ready lane at Rel (release, and a return to the ready lane a
	// leased plan never left), so a face can say "ready again".
	Freed bool
}

// ErrNoPlan is a verb on a plan the view does not have in any lane the
// verb takes from.
var ErrNoPlan = errors.New("no such plan")

// moveLeaseTTL is the life of the lease an actor takes to move a free
// ready plan: the move drops it at once; a crash leaves it this long.
const moveLeaseTTL = time.Minute

// Act does op on v, a view read just before (the CLI) or the one the
// operator acted on (the UI): a lease that changed since fails its
// compare-and-swap with ErrLost and is never dropped unseen. Someone
// else's lease needs op.Force (recover takes over any expired lease), and
// so does the promotion of an incomplete draft (planfs.PromoteProblems). A
// move of a leased plan and the drop of its lease are one step
// (Backend.MoveHeld). A free plan moving out of a ready lane may be
// claimed in the same instant, so the actor claims it first like any
// worker (create-only) and then moves it and drops that claim in one
// step: a worker's claim and the move never both land, and a parked plan
// never keeps a live lease. The lease files' verbs (treeVerbs) are
// planfs's own, which move under its lease lock and need no claim.
func Act(ctx context.Context, b Backend, v *View, op Op) (Result, error) {
	rule := model.RuleOf(op.Verb)
	p := planFor(v, op.Slug, rule)
	if p == nil {
		return Result{}, fmt.Errorf("%s: %w on %s in %s", op.Slug, ErrNoPlan, b.Name(), lanesOf(rule.Lookup()))
	}
	rel, r := v.branchRel(p), v.Lease(op.Slug)
	if err := notHolder(rel, r, op); err != nil {
		return Result{}, err
	}
	switch op.Verb {
	case model.Release:
		return release(ctx, b, rel, r, op)
	case model.Recover:
		return takeOver(ctx, b, v, r, op)
	}
	to, err := target(b, op, rule, rel, r)
	if err != nil {
		return Result{}, err
	}
	if err := promoteRefused(p, rel, op); err != nil {
		return Result{}, err
	}
	if r != nil && to == model.Rel(rel).Lane() {
		// A leased plan never left its ready lane: returning it there is
		// dropping the lease.
		return release(ctx, b, rel, r, op)
	}
	dst, err := move(ctx, b, v, rel, r, to, op)
	if err != nil {
		return Result{}, err
	}
	return Result{Rel: dst, Dropped: r}, nil
}

// notHolder refuses op on rel's lease r (nil when none) unless op holds
// it, or forces it, under its current token; recover takes any over.
func notHolder(rel string, r *Remote, op Op) error {
	if r == nil || op.Verb == model.Recover {
		return nil
	}
	switch {
	case r.AgentID != op.Holder.AgentID && !op.Force:
		return fmt.Errorf("%s: lease held by %s, not %s: %w", rel, r.AgentID, op.Holder.AgentID, ErrNotHolder)
	case op.Token != "" && r.Token != op.Token:
		return fmt.Errorf("%s: held under a newer lease (recovered or claimed again since); this one is lost: %w", rel, ErrNotHolder)
	}
	return nil
}

// promoteRefused refuses to promote an incomplete draft p without Force,
// as in the checkout.
func promoteRefused(p *model.Plan, rel string, op Op) error {
	if problems := planfs.PromoteProblems(p.Header); op.Verb == model.Promote && len(problems) > 0 && !op.Force {
		return fmt.Errorf("%s: not promoted: %s: %w", rel, strings.Join(problems, "; "), planfs.ErrNeedsForce)
	}
	return nil
}

// planFor is slug's plan in v as the verb looks it up: in the first of its
// lanes that has one (a leased plan shows in in-progress).
func planFor(v *View, slug string, rule model.VerbRule) *model.Plan {
	for _, l := range rule.Lookup() {
		for i := range v.Snapshot.Plans {
			if p := &v.Snapshot.Plans[i]; p.Slug == slug && p.Lane == l {
				return p
			}
		}
	}
	return nil
}

func lanesOf(lanes []model.Lane) string {
	s := ""
	for i, l := range lanes {
		if i > 0 {
			s += ", "
		}
		s += string(l) + "/"
	}
	return s
}

// takeOver is recover: r, the lease on op's plan, becomes op.Holder's.
func takeOver(ctx context.Context, b Backend, v *View, r *Remote, op Op) (Result, error) {
	h, err := b.TakeOver(ctx, v, op.Slug, op.Holder, op.TTL)
	if err != nil {
		return Result{Rel: h.Rel, Dropped: r}, err
	}
	res := Result{Rel: h.Rel, Dropped: r}
	if h.Version != "" {
		res.Holds = &h
	}
	return res, nil
}

// target is where op sends the plan now at rel: "" for the lease files'
// return without a lane, which planfs sends back where its event log
// says the plan came from.
func target(b Backend, op Op, rule model.VerbRule, rel string, r *Remote) (model.Lane, error) {
	to := op.To
	if to == "" {
		to = rule.Default
	}
	if to == "" && op.Verb == model.Return {
		if _, ok := b.(treeVerbs); ok {
			return "", nil
		}
		to = returnLane(rel, r)
	}
	if to == "" {
		return "", fmt.Errorf("%s: %s needs a target lane: %s", rel, op.Verb, model.Alternatives(rule.To))
	}
	if why := rule.CheckTarget(to); why != "" {
		return "", fmt.Errorf("%s: %s", rel, why)
	}
	return to, nil
}

// returnLane is where a remote's return sends the plan at rel: the ready
// lane a leased plan never left, else features.
func returnLane(rel string, r *Remote) model.Lane {
	if l := model.Rel(rel).Lane(); r != nil && l.Ready() {
		return l
	}
	return model.Features
}

func held(slug, rel string, r *Remote) Held {
	return Held{Slug: slug, Rel: rel, Lease: r.Lease, Version: r.Version, Renewed: time.Now()}
}

// treeVerbs is a backend whose verbs are planfs's own, each under
// planfs's lease lock (Local): a free ready plan moves without a claim
// (no worker can claim it mid-move), a release says where the plan went
// back to, and a force over a lease the view could not read (a corrupt
// lease file) is planfs's to judge.
type treeVerbs interface {
	releaseTree(rel string, a planfs.Actor) (string, error)
	moveTree(rel string, to model.Lane, a planfs.Actor) (string, error)
}

// treeActor is who acts on the lease files for op over r (nil: none
// read): its holder, proving it with r's token, or by force.
func treeActor(op Op, r *Remote) planfs.Actor {
	if r == nil {
		return planfs.Actor{AgentID: op.Holder.AgentID, Force: op.Force}
	}
	return planfs.Actor{AgentID: op.Holder.AgentID, Token: r.Lease.Token, Force: r.AgentID != op.Holder.AgentID}
}

func release(ctx context.Context, b Backend, rel string, r *Remote, op Op) (Result, error) {
	reason := string(op.Verb) + " by " + op.Holder.AgentID
	if tv, ok := b.(treeVerbs); ok && (r != nil || op.Force) {
		dst, err := tv.releaseTree(rel, treeActor(op, r).Because(reason))
		if err != nil {
			return Result{}, err
		}
		return Result{Rel: dst, Dropped: r, Freed: true}, nil
	}
	if r == nil {
		return Result{}, fmt.Errorf("%s: %w", rel, ErrNoLease)
	}
	if err := b.Release(ctx, held(op.Slug, rel, r), reason); err != nil {
		return Result{}, err
	}
	return Result{Rel: rel, Dropped: r, Freed: true}, nil
}

// move sends the plan at rel to lane to, with its lease r (nil: none).
func move(ctx context.Context, b Backend, v *View, rel string, r *Remote, to model.Lane, op Op) (string, error) {
	if tv, ok := b.(treeVerbs); ok {
		return tv.moveTree(rel, to, treeActor(op, r).Because(op.Why))
	}
	if r != nil {
		return b.MoveHeld(ctx, held(op.Slug, rel, r), to, op.Holder.AgentID, op.Why)
	}
	// A plan no worker can lease (a slug git refuses in a ref name) cannot
	// race a claim.
	if !model.Rel(rel).Lane().Ready() || v.Snapshot.RefNamed && model.LeaseRefProblem(op.Slug) != "" {
		return b.MovePlan(ctx, rel, to, op.Holder.AgentID, op.Why)
	}
	h, err := b.Claim(ctx, v, rel, op.Holder, moveLeaseTTL)
	if errors.Is(err, ErrLocked) {
		// Its lease is locked on the backend: no worker can claim it either.
		return b.MovePlan(ctx, rel, to, op.Holder.AgentID, op.Why)
	}
	if err != nil {
		return "", fmt.Errorf("%s: claimed by someone else since it was read; look again: %w", rel, err)
	}
	dst, err := b.MoveHeld(ctx, h, to, op.Holder.AgentID, op.Why)
	if err != nil {
		// Undo the claim: the plan stays free where it was.
		if rerr := b.Release(context.WithoutCancel(ctx), h, "undo "+string(op.Verb)); rerr != nil {
			return "", fmt.Errorf("%w (and the lease %s took to move it stays until it expires: %v)", err, op.Holder.AgentID, rerr)
		}
		return "", err
	}
	return dst, nil
}

// PlanRel is where slug's plan sits on the integration branch (a leased
// plan in the ready lane it was claimed from: plans are not moved at claim
// time); "" when absent.
func (v *View) PlanRel(slug string) string {
	for i := range v.Snapshot.Plans {
		if p := &v.Snapshot.Plans[i]; p.Slug == slug {
			return v.branchRel(p)
		}
	}
	return ""
}

// branchRel is where p, a plan of v's snapshot, sits on the branch.
func (v *View) branchRel(p *model.Plan) string {
	if p.Lane == model.InProgress {
		if l := v.Snapshot.LeaseFor(p.Rel); l != nil && l.Origin != "" {
			return l.Origin
		}
	}
	return p.Rel
}
