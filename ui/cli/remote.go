package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"time"

	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/planfs/claims"
)

// remote is one work-once run over a remote claims backend (--claims git or
// etcd, or fleetwatch.yaml's claims:). Plans are not moved at claim time:
// every verb reads the lanes and leases from one backend.View, decides with
// the same model.Decide as the local path, and writes through the backend.
type remote struct {
	w      *workOnce
	t      *planfs.Tree
	b      claims.Backend
	where  string // "--claims git", or "fleetwatch.yaml claims.backend git"
	remote string // the git remote feature branches go to
	ttl    time.Duration
	h      claims.Holder
	stdout io.Writer
	stderr io.Writer
	// lost counts the races this run lost: a worker that has met a race
	// expects more, and keeps spreading over the first picks.
	lost int
	// noticed is set once the backend's notices were said.
	noticed bool
}

// maxClaimTries bounds how many lost races one claim reads again after.
const maxClaimTries = 32

// remoteExec runs work-once over the remote backend the flags or
// fleetwatch.yaml name; it reports false when claims are the local lease
// files, and the local path runs unchanged.
func (w *workOnce) remoteExec(t *planfs.Tree, stdout, stderr io.Writer) (int, bool) {
	name, s, where, err := actingClaims(t.Project, w.claims, stderr)
	if err != nil {
		return fail(stderr, exitError, "%v", err), true
	}
	if name == "local" {
		return 0, false
	}
	b, err := openClaims(t.Project, w.claims)
	if err != nil {
		return fail(stderr, exitError, "%s: %v", where, err), true
	}
	defer b.Close()
	host, _ := os.Hostname()
	r := &remote{w: w, t: t, b: b, where: where, remote: s.Claims.Remote, ttl: claims.DefaultTTL,
		h: claims.Holder{AgentID: w.agent, Host: host, PID: os.Getpid()}, stdout: stdout, stderr: stderr}
	if r.remote == "" {
		r.remote = "origin"
	}
	if w.fs != nil && w.fs.Changed("lease-ttl") {
		r.ttl = time.Duration(w.ttl * float64(time.Second))
	}
	w.ttl = r.ttl.Seconds() // the driver's heartbeat is TTL/3
	ctx, stop := stopContext()
	defer stop()
	return r.exec(ctx), true
}

func (r *remote) exec(ctx context.Context) int {
	w := r.w
	switch {
	case w.release != "":
		return r.release(ctx)
	case w.heartbeat != "":
		return r.heartbeat(ctx)
	case w.recover:
		return r.recover(ctx)
	case w.park != "" || w.returnReady:
		return r.parkOrReturn(ctx)
	}
	w.needBranch = w.ensureWT || w.run
	worker, ep, err := w.worker(r.t)
	if err != nil {
		return fail(r.stderr, exitError, "%v", err)
	}
	if w.list {
		return r.list(ctx, worker)
	}
	if w.run {
		return r.runLoop(ctx, worker, ep)
	}
	return r.claimOnly(ctx, worker)
}

// view reads the lanes and leases once (git: one fetch).
func (r *remote) view(ctx context.Context) (*claims.View, error) {
	v, err := r.b.View(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.where, err)
	}
	r.notices(v)
	return v, nil
}

// notices says once on stderr what the backend warns of that is about no
// plan file (a backward move of the integration branch).
func (r *remote) notices(v *claims.View) {
	if r.noticed {
		return
	}
	r.noticed = true
	for _, w := range backendNotices(v.Snapshot) {
		say(r.stderr, "warning: %s: %s", w.File, w.Message)
	}
}

// glance is the backend's cheaper read for picking, where it has one.
func (r *remote) glance(ctx context.Context) (*claims.View, error) {
	read := r.b.View
	if g, ok := r.b.(claims.Glancer); ok {
		read = g.Glance
	}
	v, err := read(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.where, err)
	}
	r.notices(v)
	return v, nil
}

func (r *remote) options() model.Options {
	w := r.w
	return model.Options{NoFitCheck: w.noFit, NoDepCheck: w.noDeps, NeedBranch: w.needBranch, Refuse: w.refuseFor(r.t),
		Now: r.t.NowSeconds(), History: r.t.History()}
}

// hardFail is exit 2 with err, one line.
func (r *remote) hardFail(err error) int { return fail(r.stderr, exitError, "%v", err) }

// slugArg is the plan a verb names: a slug, a rel or a file name.
func slugArg(arg string) string { return model.SlugOf(path.Base(arg)) }

// targetSlug is --slug, or the plan --path names.
func (r *remote) targetSlug() (string, error) {
	switch {
	case r.w.slug != "":
		return r.w.slug, nil
	case r.w.path != "":
		return slugArg(r.w.path), nil
	}
	return "", errors.New("needs --path or --slug")
}

// claimOnly claims up to --max-plans plans (or the named one) and prints
// each plan's path, as the local path does.
func (r *remote) claimOnly(ctx context.Context, worker model.Worker) int {
	claimed := 0
	skip := map[string]bool{}
	for claimed < r.w.maxPlans {
		held, _, code := r.claimOne(ctx, worker, skip)
		if code >= 0 {
			return code
		}
		if held.Slug == "" {
			break
		}
		claimed++
		skip[held.Slug] = true
		fmt.Fprintln(r.stdout, r.t.Abs(held.Rel))
		if r.w.ensureWT {
			if _, code := r.worktree(held, "", r.stdout); code != exitOK {
				return code
			}
		}
		if r.w.slug != "" || r.w.path != "" {
			break
		}
	}
	if claimed == 0 {
		return exitNothing
	}
	return exitOK
}

// claimOne claims the named plan or the next bare pick. A zero Held with
// code -1 means nothing is left; code >= 0 ends the run.
func (r *remote) claimOne(ctx context.Context, worker model.Worker, skip map[string]bool) (claims.Held, *claims.View, int) {
	if r.w.slug != "" || r.w.path != "" {
		return r.claimNamed(ctx, worker)
	}
	held, v, err := r.claimNext(ctx, worker, skip)
	if err != nil {
		return held, v, r.hardFail(err)
	}
	return held, v, -1
}

// claimNext claims the first pick of a fresh view; a lost race reads the
// view again and tries the next pick, at most maxClaimTries times. slugs
// already taken by this run are skipped (a slug in both bugs/ and features/
// is one claim).
func (r *remote) claimNext(ctx context.Context, worker model.Worker, skip map[string]bool) (claims.Held, *claims.View, error) {
	lost := map[string]bool{}
	for try := 0; try < maxClaimTries; {
		if err := context.Cause(ctx); ctx.Err() != nil {
			return claims.Held{}, nil, fmt.Errorf("stopped before claiming: %v", err)
		}
		v, err := r.glance(ctx)
		if err != nil {
			return claims.Held{}, nil, err
		}
		var picks []*model.Row
		for _, p := range model.Picks(model.Decide(v.Snapshot, worker, r.options()), nil) {
			if !skip[p.Plan.Slug] && !lost[p.Plan.Rel] {
				picks = append(picks, p)
			}
		}
		if len(picks) == 0 {
			return claims.Held{}, v, nil
		}
		pick := claims.Next(picks, r.h.AgentID, r.lost)
		held, err := r.b.Claim(ctx, v, pick.Plan.Rel, r.h, r.ttl)
		switch {
		case err == nil:
			return held, v, nil
		case errors.Is(err, claims.ErrLost):
			// The fresh view shows the winner; lost also keeps a stale
			// read from sending us at the same plan again.
			lost[pick.Plan.Rel] = true
			try++
			r.lost++
			continue
		case errors.Is(err, claims.ErrLocked):
			// One plan's lease is stuck (a leftover lock on the remote):
			// it is skipped, and the plans after it are claimed all the
			// same; check reports it.
			say(r.stderr, "warning: %s: skipped: %v", pick.Plan.Rel, err)
			lost[pick.Plan.Rel] = true
			try++
			continue
		}
		return claims.Held{}, v, fmt.Errorf("%s: %w", r.where, err)
	}
	return claims.Held{}, nil, fmt.Errorf("%s: lost %d races in a row; try again", r.where, maxClaimTries)
}

// claimNamed claims the --slug/--path plan: exit 1 when it is someone
// else's, a person's, waits on unmet dependencies or the race was lost.
func (r *remote) claimNamed(ctx context.Context, worker model.Worker) (claims.Held, *claims.View, int) {
	none := claims.Held{}
	slug, err := r.targetSlug()
	if err != nil {
		return none, nil, r.hardFail(err)
	}
	v, err := r.view(ctx)
	if err != nil {
		return none, nil, r.hardFail(err)
	}
	if l := v.Lease(slug); l != nil {
		if l.AgentID == worker.AgentID && l.Live {
			held, err := claims.HeldFrom(v, slug, worker.AgentID, r.w.token)
			if err != nil {
				return none, v, r.hardFail(err)
			}
			return held, v, -1 // already ours: resumed, as the local path does
		}
		if !l.Live {
			return none, v, fail(r.stderr, exitError, "%s: lease of %s expired (--recover takes it over)", slug, l.AgentID)
		}
		return none, v, fail(r.stderr, exitNothing, "%s: claimed by %s%s", slug, l.AgentID, heldOn(&l.Lease, " "))
	}
	row := readyRow(model.Decide(v.Snapshot, worker, r.options()), slug)
	if row == nil {
		return none, v, fail(r.stderr, exitNothing, "--slug: %s: no ready plan of that name under bugs/ or features/", slug)
	}
	h := row.Plan.Header
	switch {
	case h.Assignee != "" && !h.AgentAssignable && !r.w.allowAssigned:
		return none, v, fail(r.stderr, exitNothing, "%s: assigned to %s (--allow-assigned overrides)", row.Plan.Rel, h.Assignee)
	case !r.w.noDeps && !row.Deps.Met:
		return none, v, fail(r.stderr, exitNothing, "%s: depends on unfinished plans: %s", row.Plan.Rel, depsCell(h, row.Deps))
	}
	if row.Problem != "" {
		return none, v, fail(r.stderr, exitError, "%s: %s (fleetwatch check lists such plans)", row.Plan.Rel, row.Problem)
	}
	held, err := r.b.Claim(ctx, v, row.Plan.Rel, r.h, r.ttl)
	if errors.Is(err, claims.ErrLost) || errors.Is(err, claims.ErrLocked) {
		return none, v, fail(r.stderr, exitNothing, "%s: %v", row.Plan.Rel, err)
	}
	if err != nil {
		return none, v, r.hardFail(fmt.Errorf("%s: %w", r.where, err))
	}
	return held, v, -1
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

// heldOn is " (held on HOST)" after sep for a remote lease; "" for a
// lease file.
func heldOn(l *model.Lease, sep string) string {
	if l == nil || l.Backend == "" {
		return ""
	}
	host := l.Host
	if host == "" {
		host = "an unnamed host"
	}
	return sep + "(held on " + host + ")"
}
