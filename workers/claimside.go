package workers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/coord"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/seat"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// claimSide is where the loop's leases live: the tree's lease files
// (a claimed plan moves to in-progress/) or a claims backend (it stays in
// its ready lane, leased). The loop is the same; each side keeps what
// really differs.
type claimSide interface {
	// next claims the next plan: the named one, or the next pick. A claim
	// with no rel and going means nothing is left; any other code ends
	// the run with note.
	next(ctx context.Context, claimed int) (*claim, Status, string)
	// worktree gives the agent its worktree on the plan's feature branch
	// when one is wanted, printing anchor's KEY=value lines to out.
	worktree(c *claim, out io.Writer) (string, Status)
	// handBack gives the plan back, saying why.
	handBack(c *claim, reason string) error
	// keeper is the lease the driver keeps while the agent works; nil:
	// the tree's lease file.
	keeper(c *claim) Keeper
	// planFile is the plan the agent reads, "" for the tree's own.
	planFile(c *claim, wt string) string
	// ran follows a finished run of the agent.
	ran(c *claim)
}

// claim is one plan this run holds.
type claim struct {
	rel, token string
	remote     *remoteClaim // a claims backend's lease; nil for a lease file
}

// side is the claims side of this run; a lease-file run scans (and
// repairs) the tree first.
func (w *WorkOnce) side(ctx context.Context) (claimSide, Status) {
	if w.Claims != nil {
		return w.backendSide(), going
	}
	snap, code := w.scan()
	if code != going {
		return nil, code
	}
	// Bare picks go through the lease files as a claims.Backend; a scan's
	// warnings are the plans' own, which the repair has said.
	w.Claims, w.noticed = &claims.Local{Tree: w.Tree, Seconds: w.TTL}, true
	return &localSide{w: w, snap: snap, skip: map[string]bool{}, picks: w.backendSide()}, going
}

// localSide is the tree's own lease files: a claim moves the plan to
// in-progress/, a named claim follows anchor's rules, and the
// coordinator's inbox holds plan-first plans between turns.
type localSide struct {
	w     *WorkOnce
	snap  *model.Snapshot
	picks *backendSide
	skip  map[string]bool // rels resumeOne took up or tried
}

// scan reads the tree and repairs what dead claimers left half done.
func (w *WorkOnce) scan() (*model.Snapshot, Status) {
	t := w.Tree
	snap, err := t.Scan()
	if err != nil {
		return nil, w.fail(StatusError, "cannot read %s: %v", t.Plans, err)
	}
	repairs := t.Repair(snap)
	for _, n := range repairs.Unfixed {
		w.Say("warning: %s: %s", n.File, n.Message)
	}
	if len(repairs.Fixed) > 0 {
		for _, n := range repairs.Fixed {
			w.Say("repair: %s", n)
		}
		if snap, err = t.Scan(); err != nil {
			return nil, w.fail(StatusError, "cannot read %s: %v", t.Plans, err)
		}
	}
	return snap, going
}

func (s *localSide) next(ctx context.Context, claimed int) (*claim, Status, string) {
	w := s.w
	if w.named() {
		c, code := s.claimNamed()
		if code != StatusOK {
			return nil, code, "could not claim the named plan"
		}
		return c, going, ""
	}
	if w.Run && claimed > 0 {
		// Time has passed and the tree has moved on: look again.
		next, code := w.scan()
		if code != going {
			return nil, code, "cannot read the tree"
		}
		s.snap = next
	}
	if w.Run {
		// A decided plan-first plan first: the one exception to a bare
		// pick never taking an in-progress plan.
		if c, ok := s.resumeOne(); ok {
			return c, going, ""
		}
	}
	opt := w.Options()
	if w.Run {
		w.saySkipped(s.snap, opt)
	}
	if err := w.Tree.Writable(); err != nil {
		return nil, w.fail(StatusError, "%v", err), err.Error()
	}
	held, _, err := s.picks.claimNext(ctx)
	if err != nil {
		return nil, w.fail(StatusError, "%v", err), err.Error()
	}
	return &claim{rel: held.Rel, token: held.Lease.Token}, going, ""
}

// saySkipped says, once per plan and run, why the pick passes over a ready
// plan no claim can take (its name, a branch another plan shares, a
// template that refuses it): the fleet moves on, and the log says why.
func (w *WorkOnce) saySkipped(snap *model.Snapshot, opt model.Options) {
	for _, r := range model.Decide(snap, w.Worker, opt) {
		if r.Problem == "" || !r.Plan.Lane.Ready() || w.saidSkip[r.Plan.Rel] {
			continue
		}
		if w.saidSkip == nil {
			w.saidSkip = map[string]bool{}
		}
		w.saidSkip[r.Plan.Rel] = true
		w.Say("skipped %s: %s", r.Plan.Rel, r.Problem)
	}
}

// claimNamed claims (or resumes) the plan named by Slug or Path. Being
// refused a plan (a person's, unmet dependencies, lost to another worker) is
// exit 1, anything else exit 2.
func (s *localSide) claimNamed() (*claim, Status) {
	w, t := s.w, s.w.Tree
	opt := w.Options()
	var rel string
	var err error
	if w.Path != "" {
		cwd, _ := os.Getwd()
		if rel, err = t.ResolvePath(w.Path, cwd); err != nil {
			return nil, w.fail(StatusError, "--path %v", err)
		}
	} else if rel, err = planfs.ResolveNamed(s.snap, w.Slug, w.Worker.AgentID, opt.Now); err != nil {
		if errors.Is(err, planfs.ErrNotFound) {
			return nil, w.fail(StatusNothing, "--slug: %v", err)
		}
		return nil, w.fail(StatusError, "--slug: %v", err)
	}
	if c, code, done := s.resumeNamed(rel); done {
		return c, code
	}
	held, warning, err := t.ClaimNamed(s.snap, rel, w.Worker, opt, w.AllowAssigned, w.TTL)
	switch {
	case errors.Is(err, planfs.ErrAssigned):
		return nil, w.fail(StatusNothing, "%v (--allow-assigned overrides)", err)
	case errors.Is(err, planfs.ErrDepsUnmet), errors.Is(err, planfs.ErrClaimed), errors.Is(err, planfs.ErrNotFound):
		return nil, w.fail(StatusNothing, "%v", err)
	case errors.Is(err, planfs.ErrNoLease):
		return nil, w.fail(StatusError, "%v (--recover takes it over)", err)
	case errors.Is(err, planfs.ErrUnclaimable):
		return nil, w.fail(StatusError, "%v (fleetwatch check lists such plans)", err)
	case err != nil:
		return nil, w.fail(StatusError, "%v", err)
	}
	if warning != "" {
		w.Say("warning: %s", warning)
	}
	// The loop prints its path, once the caps hold (and with Run, once
	// the agent is started on it).
	return &claim{rel: held.Rel, token: held.Token}, StatusOK
}

// resumeOne takes up, for a Run worker, a plan-first plan the coordinator
// decided: its own first, else one whose agent is gone and that this worker
// is fit for (a fenced takeover: new token, the old run can no longer touch
// it). ok is false when there is none, or another worker won it.
func (s *localSide) resumeOne() (*claim, bool) {
	w, t := s.w, s.w.Tree
	running := func(agent string) bool { return proc.DriverRunning(t.Project, agent) }
	rel, takeOver, ok := coord.Resumable(t, s.snap, w.Worker, w.Options(), w.TTL, running)
	if !ok || s.skip[rel] {
		return nil, false
	}
	s.skip[rel] = true
	from := ""
	if l := t.ReadLease(rel); l != nil {
		from = l.AgentID
	}
	held, err := t.Resume(rel, w.Worker.AgentID, w.TTL, takeOver)
	if err != nil {
		w.Say("warning: cannot resume %s: %v", rel, err)
		return nil, false
	}
	w.markResumed(rel)
	if takeOver {
		w.Say("resumed %s, decided for %s, who is gone", rel, from)
	} else {
		w.Say("resumed %s: the coordinator decided", rel)
	}
	return &claim{rel: held.Rel, token: held.Token}, true
}

// resumeNamed handles a named claim of an in-progress plan the inbox holds:
// this agent's decided one is resumed; one still awaiting approval is
// refused (exit 1). done is false for any other plan.
func (s *localSide) resumeNamed(rel string) (*claim, Status, bool) {
	w, t := s.w, s.w.Tree
	if model.Rel(rel).Lane() != model.InProgress {
		return nil, going, false
	}
	l := t.ReadLease(rel)
	switch {
	case l == nil || l.Corrupt != "" || l.Awaiting == "":
		return nil, going, false
	case l.Awaiting == model.AwaitApproval:
		return nil, w.fail(StatusNothing, "%s: awaiting approval in the inbox (fleetwatch approve or reject decides)", rel), true
	case l.AgentID != w.Worker.AgentID:
		return nil, w.fail(StatusNothing, "%s: %s", rel, l.AwaitingText()), true
	}
	held, err := t.Resume(rel, w.Worker.AgentID, w.TTL, false)
	if err != nil {
		return nil, w.fail(StatusNothing, "%v", err), true
	}
	w.markResumed(rel)
	return &claim{rel: held.Rel, token: held.Token}, StatusOK, true
}

func (w *WorkOnce) markResumed(rel string) {
	if w.resumed == nil {
		w.resumed = map[string]bool{}
	}
	w.resumed[rel] = true
}

// worktree gives the agent its git worktree on the claimed plan's feature
// branch when EnsureWorktree asks for one. A failure is exit 2 and the
// plan stays claimed, unless an agent was to work it: then it is given
// back rather than stranded for a whole lease, one more plan on every
// cron tick.
func (s *localSide) worktree(c *claim, out io.Writer) (string, Status) {
	w := s.w
	if !w.EnsureWorktree {
		return "", StatusOK
	}
	wt, err := seat.Ensure(w.Tree.Project, w.Worker.AgentID, model.SlugOf(path.Base(c.rel)))
	if err != nil && w.Run {
		reason := "--ensure-worktree: " + err.Error()
		if s.handBack(c, reason) == nil {
			return "", w.fail(StatusError, "%s (released %s)", reason, c.rel)
		}
	}
	if err != nil {
		return "", w.fail(StatusError, "--ensure-worktree: %v (the plan stays claimed: %s)", err, c.rel)
	}
	return w.printWorktree(wt, out), StatusOK
}

// printWorktree prints anchor's KEY=value lines for wt and returns its path.
func (w *WorkOnce) printWorktree(wt tree.Worktree, out io.Writer) string {
	if wt.HandOff != nil {
		w.Say("%s", wt.HandOff)
	}
	fmt.Fprintf(out, "WORKTREE=%s\nBRANCH=%s\nINTEGRATION=%s\n", wt.Path, wt.Branch, wt.Integration)
	if port, ok := look.PortOf(w.Tree.Project, w.Worker.AgentID); ok {
		fmt.Fprintf(out, "PORT=%d\n", port)
	}
	return wt.Path
}

// handBack gives the plan back through the backend (planfs's release, to
// the lane it was claimed from), saying why.
func (s *localSide) handBack(c *claim, reason string) error {
	held := claims.Held{Rel: c.rel, Lease: model.Lease{AgentID: s.w.Worker.AgentID, Token: c.token}}
	return s.w.Claims.Release(context.Background(), held, reason)
}

func (s *localSide) keeper(*claim) Keeper           { return nil }
func (s *localSide) planFile(*claim, string) string { return "" }
func (s *localSide) ran(*claim)                     {}
