package workers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/seat"
)

// maxClaimTries bounds how many lost races one claim reads again after.
const maxClaimTries = 32

// backendSide claims through a claims.Backend: every claim reads the
// lanes and leases from one view, decides with model.Decide and writes
// through the backend, reading again after a lost race. A remote's (git,
// etcd) plans are not moved at claim time; the lease files' bare picks
// (claims.Local) take this path too.
type backendSide struct {
	w    *WorkOnce
	skip map[string]bool // slugs this run took (one in bugs/ and features/ is one claim)
}

// remoteClaim is a backend's lease this run holds, with the integration
// commit its view was read at and the keeper that holds it.
type remoteClaim struct {
	held claims.Held
	tip  string
	k    *backendKeeper
}

func (w *WorkOnce) backendSide() *backendSide {
	w.claimsHolder = claims.Holder{AgentID: w.Worker.AgentID, Host: look.Hostname(), PID: os.Getpid(), RunsAs: w.runsAs()}
	if w.Remote == "" {
		w.Remote = "origin"
	}
	return &backendSide{w: w, skip: map[string]bool{}}
}

// ttl is the lease's life as a backend takes it.
func (w *WorkOnce) ttl() time.Duration { return time.Duration(w.TTL * float64(time.Second)) }

// view reads the lanes and leases once (git: one fetch); glance is the
// backend's cheaper read for picking, where it has one.
func (w *WorkOnce) view(ctx context.Context, glance bool) (*claims.View, error) {
	read := w.Claims.View
	if g, ok := w.Claims.(claims.Glancer); ok && glance {
		read = g.Glance
	}
	v, err := read(ctx)
	if err != nil {
		return nil, w.within(err)
	}
	if !w.noticed {
		// Said once: what the backend warns of that is about no plan file.
		w.noticed = true
		for _, n := range claims.Notices(v.Snapshot) {
			w.Say("warning: %s: %s", n.File, n.Message)
		}
	}
	return v, nil
}

func (s *backendSide) next(ctx context.Context, _ int) (*claim, Status, string) {
	w := s.w
	var held claims.Held
	var v *claims.View
	if w.named() {
		var code Status
		if held, v, code = s.claimNamed(ctx); code != going {
			return nil, code, "could not claim"
		}
	} else {
		var err error
		if held, v, err = s.claimNext(ctx); err != nil {
			return nil, w.fail(StatusError, "%v", err), "could not claim"
		}
	}
	if held.Slug == "" {
		return &claim{}, going, ""
	}
	s.skip[held.Slug] = true
	rc := &remoteClaim{held: held}
	if v != nil && w.Run {
		rc.tip = v.Tip
	}
	rc.k = w.keeperOf(held)
	return &claim{rel: held.Rel, token: held.Lease.Token, remote: rc}, going, ""
}

// claimNext claims the first pick of a fresh view; a lost race reads the
// view again and tries the next pick, at most maxClaimTries times.
func (s *backendSide) claimNext(ctx context.Context) (claims.Held, *claims.View, error) {
	w := s.w
	lost := map[string]bool{}
	for try := 0; try < maxClaimTries; {
		if err := context.Cause(ctx); ctx.Err() != nil {
			return claims.Held{}, nil, fmt.Errorf("stopped before claiming: %v", err)
		}
		v, err := w.view(ctx, true)
		if err != nil {
			return claims.Held{}, nil, err
		}
		var picks []*model.Row
		for _, p := range model.Picks(model.Decide(v.Snapshot, w.Worker, w.Options()), nil) {
			if !s.skip[p.Plan.Slug] && !lost[p.Plan.Rel] {
				picks = append(picks, p)
			}
		}
		if len(picks) == 0 {
			return claims.Held{}, v, nil
		}
		pick := claims.Next(picks, w.Worker.AgentID, w.lostRaces)
		held, err := w.Claims.Claim(ctx, v, pick.Plan.Rel, w.claimsHolder, w.ttl())
		switch {
		case err == nil:
			return held, v, nil
		case errors.Is(err, claims.ErrLost):
			// The fresh view shows the winner; lost also keeps a stale
			// read from sending us at the same plan again. A worker that
			// has met a race expects more, and spreads over the first picks.
			lost[pick.Plan.Rel] = true
			try++
			w.lostRaces++
			continue
		case errors.Is(err, claims.ErrLocked):
			// One plan's lease is stuck (a leftover lock on the remote):
			// it is skipped, and the plans after it are claimed all the
			// same; check reports it.
			w.Say("warning: %s: skipped: %v", pick.Plan.Rel, err)
			lost[pick.Plan.Rel] = true
			try++
			continue
		}
		return claims.Held{}, v, w.within(err)
	}
	return claims.Held{}, nil, w.within(fmt.Errorf("lost %d races in a row; try again", maxClaimTries))
}

// within names the backend an error came from, when it is not the tree's
// own lease files.
func (w *WorkOnce) within(err error) error {
	if w.Where == "" {
		return err
	}
	return fmt.Errorf("%s: %w", w.Where, err)
}

// claimNamed claims the Slug/Path plan: exit 1 when it is someone else's,
// a person's, waits on unmet dependencies or the race was lost.
func (s *backendSide) claimNamed(ctx context.Context) (claims.Held, *claims.View, Status) {
	w, none := s.w, claims.Held{}
	slug := w.Slug
	if slug == "" {
		slug = model.SlugOf(path.Base(w.Path))
	}
	v, err := w.view(ctx, false)
	if err != nil {
		return none, nil, w.fail(StatusError, "%v", err)
	}
	if l := v.Lease(slug); l != nil {
		held, code := w.leasedNamed(v, slug, l)
		return held, v, code
	}
	row := readyRow(model.Decide(v.Snapshot, w.Worker, w.Options()), slug)
	if row == nil {
		return none, v, w.fail(StatusNothing, "--slug: %s: no ready plan of that name under bugs/ or features/", slug)
	}
	if code := w.refuseNamed(row); code != going {
		return none, v, code
	}
	held, err := w.Claims.Claim(ctx, v, row.Plan.Rel, w.claimsHolder, w.ttl())
	if errors.Is(err, claims.ErrLost) || errors.Is(err, claims.ErrLocked) {
		return none, v, w.fail(StatusNothing, "%s: %v", row.Plan.Rel, err)
	}
	if err != nil {
		return none, v, w.fail(StatusError, "%s: %v", w.Where, err)
	}
	return held, v, going
}

// leasedNamed is the named plan slug already under lease l: resumed when
// it is this worker's live lease, as a lease file is; refused otherwise.
func (w *WorkOnce) leasedNamed(v *claims.View, slug string, l *claims.Remote) (claims.Held, Status) {
	if l.AgentID == w.Worker.AgentID && l.Live {
		held, err := claims.HeldFrom(v, slug, w.Worker.AgentID, w.Token)
		if err != nil {
			return claims.Held{}, w.fail(StatusError, "%v", err)
		}
		return held, going
	}
	if !l.Live {
		return claims.Held{}, w.fail(StatusError, "%s: lease of %s expired (--recover takes it over)", slug, l.AgentID)
	}
	return claims.Held{}, w.fail(StatusNothing, "%s: claimed by %s%s", slug, l.AgentID, HeldOn(&l.Lease, " "))
}

// refuseNamed says why the named plan's ready row may not be claimed (a
// person's, unmet dependencies, a problem in the plan), or going.
func (w *WorkOnce) refuseNamed(row *model.Row) Status {
	h := row.Plan.Header
	switch {
	case h.Assignee != "" && !h.AgentAssignable && !w.AllowAssigned:
		return w.fail(StatusNothing, "%s: assigned to %s (--allow-assigned overrides)", row.Plan.Rel, h.Assignee)
	case !w.NoDeps && !row.Deps.Met:
		return w.fail(StatusNothing, "%s: depends on unfinished plans: %s", row.Plan.Rel, unmetCell(row.Deps))
	case row.Problem != "":
		return w.fail(StatusError, "%s: %s (fleetwatch check lists such plans)", row.Plan.Rel, row.Problem)
	}
	return going
}

// unmetCell is the --list deps cell of unmet dependencies: UNMET:a,b.
func unmetCell(d model.DepStatus) string {
	out := "UNMET:"
	for i, u := range d.Unmet {
		if i > 0 {
			out += ","
		}
		out += u.Slug
	}
	return out
}

// readyRow is slug's row in a ready lane, or nil.
func readyRow(rows []model.Row, slug string) *model.Row {
	for i := range rows {
		if rows[i].Plan.Slug == slug && rows[i].Plan.Lane.Ready() {
			return &rows[i]
		}
	}
	return nil
}

// HeldOn is " (held on HOST)" after sep for a remote lease; "" for a
// lease file.
func HeldOn(l *model.Lease, sep string) string {
	if l == nil || l.Backend == "" {
		return ""
	}
	host := l.Host
	if host == "" {
		host = "an unnamed host"
	}
	return sep + "(held on " + host + ")"
}

// worktree gives the agent its worktree on feature/<slug>, started from
// the remote's feature branch when it has one (a previous owner's work on
// another machine), else from the integration commit the lanes were read
// at; the keeper pushes from where the seeding saw the remote's branch.
// A failure leaves the plan claimed, and a Run gives it back.
func (s *backendSide) worktree(c *claim, out io.Writer) (string, Status) {
	w, rc := s.w, c.remote
	if !w.EnsureWorktree && !w.Run {
		return "", StatusOK
	}
	base, err := w.seedFeature(rc.held.Slug, rc.tip)
	if err != nil {
		w.Say("warning: %v", err)
	}
	rc.k.base, rc.k.baseKnown = base.oid, base.ok
	wt, err := seat.Ensure(w.Tree.Project, w.Worker.AgentID, rc.held.Slug)
	if err != nil {
		code := w.fail(StatusError, "--ensure-worktree: %v (the plan stays claimed: %s)", err, c.rel)
		if w.Run {
			_, _ = rc.k.Release("no worktree for " + c.rel)
		}
		return "", code
	}
	return w.printWorktree(wt, out), StatusOK
}

// handBack pushes the branch while the lease holds, then drops the lease.
func (s *backendSide) handBack(c *claim, reason string) error {
	_, err := c.remote.k.Release(reason)
	return err
}

func (s *backendSide) keeper(c *claim) Keeper { return c.remote.k }

// planFile is the plan the agent reads: the worktree's copy (checked out
// from the integration branch the lanes were read at), else the project's
// own.
func (s *backendSide) planFile(c *claim, wt string) string {
	t := s.w.Tree
	plansDir, err := filepath.Rel(t.Project, t.Plans)
	if err == nil && wt != "" {
		p := filepath.Join(wt, plansDir, filepath.FromSlash(c.rel))
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return t.Abs(c.rel)
}

// ran pushes the branch when the agent stops, whatever the outcome
// (unless the lease is lost).
func (s *backendSide) ran(c *claim) { c.remote.k.push() }

// keeperOf is the keeper of held: the driver's lease in the backend.
func (w *WorkOnce) keeperOf(held claims.Held) *backendKeeper {
	ttl := w.ttl()
	return &backendKeeper{b: w.Claims, held: held, ttl: ttl, every: ttl / 3, repo: w.Tree.Project, remote: w.Remote, tree: w.Tree, log: w.log}
}
