package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"fleetwatch/claims"
	"fleetwatch/model"
)

// remoteListJSON is --list --json over a remote backend: the local object,
// plus which backend answered and when its view was read, so a reader
// knows how old the leases it shows are.
type remoteListJSON struct {
	listJSON
	Claims     string  `json:"claims"`
	ViewReadAt string  `json:"view_read_at"`
	ViewAge    float64 `json:"view_age_seconds"`
	ViewTip    string  `json:"view_tip"`
}

// list prints what this worker would see, from one view: the same rows
// and ranking as the local listing, with remote leases overlaid.
func (r *remote) list(ctx context.Context, worker model.Worker) int {
	v, err := r.view(ctx)
	if err != nil {
		return r.hardFail(err)
	}
	opt := r.options()
	rows := model.Decide(v.Snapshot, worker, opt)
	age := time.Since(v.ReadAt)
	if r.w.jsonOut {
		out := remoteListJSON{listJSON: buildListJSON(v.Snapshot, nil, rows, worker, opt.Now), Claims: r.b.Name(),
			ViewReadAt: v.ReadAt.UTC().Format(time.RFC3339Nano), ViewAge: age.Seconds(), ViewTip: v.Tip}
		return writeJSON(r.stdout, r.stderr, out)
	}
	printListTSV(r.stdout, r.stderr, v.Snapshot, rows, worker, opt)
	// anchor's columns have no room for it: how old the view is goes to
	// stderr, with the comments.
	lanes := "lanes from this checkout"
	if v.Tip != "" {
		lanes = "lanes at " + short(v.Tip)
	}
	fmt.Fprintf(r.stderr, "# claims: %s, view read at %s (%s ago), %s\n", r.where,
		v.ReadAt.UTC().Format(time.RFC3339), age.Round(time.Millisecond), lanes)
	return exitOK
}

func short(oid string) string {
	if len(oid) > 12 {
		return oid[:12]
	}
	return oid
}

// held is the lease this agent holds on slug, as a fresh view has it.
func (r *remote) held(ctx context.Context, slug string) (claims.Held, *claims.View, error) {
	v, err := r.view(ctx)
	if err != nil {
		return claims.Held{}, nil, err
	}
	held, err := claims.HeldFrom(v, slug, r.w.agent, r.w.token)
	return held, v, err
}

func (r *remote) heartbeat(ctx context.Context) int {
	slug := slugArg(r.w.heartbeat)
	held, _, err := r.held(ctx, slug)
	if err != nil {
		return r.hardFail(err)
	}
	if _, err := r.b.Renew(ctx, held, r.ttl); err != nil {
		return r.hardFail(fmt.Errorf("%s: lease not renewed: %w", slug, err))
	}
	fmt.Fprintln(r.stdout, held.Rel)
	return exitOK
}

func (r *remote) release(ctx context.Context) int {
	slug := slugArg(r.w.release)
	held, _, err := r.held(ctx, slug)
	switch {
	case errors.Is(err, claims.ErrNoLease):
		fmt.Fprintln(r.stdout, "no lease "+r.w.release)
		return exitOK
	case err != nil:
		return r.hardFail(err)
	}
	if err := r.b.Release(ctx, held, "released by "+r.w.agent); err != nil {
		return r.hardFail(fmt.Errorf("%s: %w", slug, err))
	}
	fmt.Fprintf(r.stdout, "released %s\n", held.Rel)
	return exitOK
}

// recover takes over the named plan's expired lease. Too early (the lease
// not yet seen unchanged for TTL plus grace on this machine), nobody's
// lease, or another recoverer first: exit 1.
func (r *remote) recover(ctx context.Context) int {
	slug, err := r.targetSlug()
	if err != nil {
		return fail(r.stderr, exitError, "--recover: %v", err)
	}
	v, err := r.view(ctx)
	if err != nil {
		return r.hardFail(err)
	}
	held, err := r.b.TakeOver(ctx, v, slug, r.h, r.ttl)
	var early *claims.TooEarlyError
	switch {
	case errors.As(err, &early):
		return fail(r.stderr, exitNothing, "%v", early)
	case errors.Is(err, claims.ErrNoLease), errors.Is(err, claims.ErrLost):
		return fail(r.stderr, exitNothing, "--recover: %v", err)
	case err != nil:
		return r.hardFail(fmt.Errorf("%s: %w", r.where, err))
	}
	fmt.Fprintln(r.stdout, r.t.Abs(held.Rel))
	return exitOK
}

// parkOrReturn moves the named plan on the integration branch, releasing
// the caller's own lease on it first; someone else's lease needs --force.
func (r *remote) parkOrReturn(ctx context.Context) int {
	verb, to := "--return-ready", model.Lane(r.w.targetLane)
	if r.w.park != "" {
		verb, to = "--park", model.Lane(r.w.park)
	}
	slug, err := r.targetSlug()
	if err != nil {
		return fail(r.stderr, exitError, "%s: %v", verb, err)
	}
	v, err := r.view(ctx)
	if err != nil {
		return r.hardFail(err)
	}
	rel := planRel(v, slug)
	if rel == "" {
		return fail(r.stderr, exitNothing, "%s: %s: no such plan on the integration branch", verb, slug)
	}
	if l := v.Lease(slug); l != nil {
		if l.AgentID != r.w.agent && !r.w.force {
			return fail(r.stderr, exitError, "%s: %s: lease held by %s%s, not %s (--force overrides)", verb, rel, l.AgentID, heldOn(&l.Lease, " "), r.w.agent)
		}
		held := claims.Held{Slug: slug, Rel: rel, Lease: l.Lease, Version: l.Version, Renewed: time.Now()}
		if err := r.b.Release(ctx, held, verb+" by "+r.w.agent); err != nil {
			return r.hardFail(fmt.Errorf("%s: %s: %w", verb, rel, err))
		}
	}
	if to == "" {
		to = model.Features
		if lane := model.Rel(rel).Lane(); lane.Ready() {
			to = lane
		}
	}
	dst, err := r.b.MovePlan(ctx, rel, to, r.w.agent, "")
	if err != nil {
		return r.hardFail(fmt.Errorf("%s: %s: %w", verb, rel, err))
	}
	fmt.Fprintln(r.stdout, r.t.Abs(dst))
	return exitOK
}

// planRel is where slug's plan sits on the integration branch (a leased
// plan at its origin: plans are not moved at claim time); "" when absent.
func planRel(v *claims.View, slug string) string {
	if l := v.Lease(slug); l != nil && l.Origin != "" {
		return l.Origin
	}
	for _, p := range v.Snapshot.Plans {
		if p.Slug == slug {
			for _, l := range v.Snapshot.Leases {
				if l.Rel == p.Rel && l.Origin != "" {
					return l.Origin
				}
			}
			return p.Rel
		}
	}
	return ""
}
