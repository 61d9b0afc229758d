package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/planfs/claims"
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

// act is one operator verb on a fresh view, through the one engine call
// every face makes (claims.Act), as this worker.
func (r *remote) act(ctx context.Context, op claims.Op) (claims.Result, error) {
	v, err := r.view(ctx)
	if err != nil {
		return claims.Result{}, err
	}
	op.Holder, op.Token, op.Force, op.TTL = r.h, r.w.token, r.w.force, r.ttl
	return claims.Act(ctx, r.b, v, op)
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
	res, err := r.act(ctx, claims.Op{Verb: model.Release, Slug: slugArg(r.w.release)})
	switch {
	case errors.Is(err, claims.ErrNoLease), errors.Is(err, claims.ErrNoPlan):
		fmt.Fprintln(r.stdout, "no lease "+r.w.release)
		return exitOK
	case err != nil:
		return r.hardFail(err)
	}
	fmt.Fprintf(r.stdout, "released %s\n", res.Rel)
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
	res, err := r.act(ctx, claims.Op{Verb: model.Recover, Slug: slug})
	var early *claims.TooEarlyError
	switch {
	case errors.As(err, &early):
		return fail(r.stderr, exitNothing, "%v", early)
	case errors.Is(err, claims.ErrNoLease), errors.Is(err, claims.ErrLost), errors.Is(err, claims.ErrNoPlan):
		return fail(r.stderr, exitNothing, "--recover: %v", err)
	case err != nil:
		return r.hardFail(fmt.Errorf("%s: %w", r.where, err))
	}
	fmt.Fprintln(r.stdout, r.t.Abs(res.Rel))
	return exitOK
}

// parkOrReturn moves the named plan on the integration branch; a lease on
// it goes in the same step (the caller's own, or anyone's with --force).
func (r *remote) parkOrReturn(ctx context.Context) int {
	flag, op := "--return-ready", claims.Op{Verb: model.Return, To: model.Lane(r.w.targetLane)}
	if r.w.park != "" {
		flag, op = "--park", claims.Op{Verb: model.Park, To: model.Lane(r.w.park)}
	}
	slug, err := r.targetSlug()
	if err != nil {
		return fail(r.stderr, exitError, "%s: %v", flag, err)
	}
	op.Slug = slug
	res, err := r.act(ctx, op)
	switch {
	case errors.Is(err, claims.ErrNoPlan), errors.Is(err, claims.ErrLost):
		return fail(r.stderr, exitNothing, "%s: %v", flag, err)
	case errors.Is(err, claims.ErrNotHolder):
		return fail(r.stderr, exitError, "%s: %v (--force overrides)", flag, err)
	case err != nil:
		return r.hardFail(fmt.Errorf("%s: %w", flag, err))
	}
	fmt.Fprintln(r.stdout, r.t.Abs(res.Rel))
	return exitOK
}

// remote runs an operator verb through the project's claims backend when
// its claims are remote: one claims.Act on a fresh view, the call the UI
// makes too. It reports false when claims are the local lease files.
func (v verb) remote(t *planfs.Tree, f *verbFlags, arg string, stdout, stderr io.Writer) (int, bool) {
	name, _, where, err := actingClaims(t.Project, f.claims, stderr)
	if err != nil {
		return fail(stderr, exitError, "%s: %v", v.name, err), true
	}
	if name == "local" {
		return 0, false
	}
	ttl := time.Duration(f.ttl * float64(time.Second))
	if v.withTTL {
		if err := claims.ValidTTL(ttl); err != nil {
			return fail(stderr, exitError, "%s: --lease-ttl: %v", v.name, err), true
		}
	}
	b, err := openClaims(t.Project, f.claims)
	if err != nil {
		return fail(stderr, exitError, "%s: %s: %v", v.name, where, err), true
	}
	defer b.Close()
	ctx, stop := stopContext()
	defer stop()
	view, err := b.View(ctx)
	if err != nil {
		return fail(stderr, exitError, "%s: %s: %v", v.name, where, err), true
	}
	host, _ := os.Hostname()
	res, err := claims.Act(ctx, b, view, claims.Op{
		Verb: v.name, Slug: slugArg(arg), To: model.Lane(f.to), Why: f.reason, Token: f.token, Force: f.force, TTL: ttl,
		Holder: claims.Holder{AgentID: f.agent, Host: host, PID: os.Getpid()},
	})
	if err != nil {
		hint := ""
		if (errors.Is(err, claims.ErrNotHolder) || errors.Is(err, planfs.ErrNeedsForce)) && !v.withTTL {
			hint = " (--force overrides)"
		}
		return fail(stderr, exitError, "%s: %v%s", v.name, err, hint), true
	}
	if res.Dropped != nil && res.Dropped.AgentID != f.agent {
		say(stderr, "%s: %s's lease%s dropped", res.Rel, res.Dropped.AgentID, heldOn(&res.Dropped.Lease, " "))
	}
	fmt.Fprintln(stdout, t.Abs(res.Rel))
	return exitOK, true
}
