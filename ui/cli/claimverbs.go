package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// claimsRun is work-once over a remote claims backend (--claims git or
// etcd, or fleetwatch.yaml's claims:): its own verbs through claims.Act,
// its listing from one backend.View, and the work loop over the backend.
type claimsRun struct {
	w      *workOnce
	t      *planfs.Tree
	b      claims.Backend
	where  string // "--claims git", or "fleetwatch.yaml claims.backend git"
	remote string // the git remote feature branches go to
	ttl    time.Duration
	stdout io.Writer
	stderr io.Writer
}

// remoteExec runs work-once over the remote backend the flags or
// fleetwatch.yaml name; it reports false when claims are the local lease
// files.
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
	c := &claimsRun{w: w, t: t, b: b, where: where, remote: s.Claims.Remote, ttl: claims.DefaultTTL, stdout: stdout, stderr: stderr}
	if w.fs != nil && w.fs.Changed("lease-ttl") {
		c.ttl = time.Duration(w.ttl * float64(time.Second))
	}
	w.ttl = c.ttl.Seconds() // the driver's heartbeat is TTL/3
	ctx, stop := stopContext()
	defer stop()
	return c.exec(ctx), true
}

func (c *claimsRun) exec(ctx context.Context) int {
	w := c.w
	switch {
	case w.release != "":
		return c.release(ctx)
	case w.heartbeat != "":
		return c.heartbeat(ctx)
	case w.recover:
		return c.recover(ctx)
	case w.park != "" || w.returnReady:
		return c.parkOrReturn(ctx)
	}
	w.needBranch = w.ensureWT || w.run
	worker, ep, err := w.worker(c.t)
	if err != nil {
		return fail(c.stderr, exitError, "%v", err)
	}
	if w.list {
		return c.list(ctx, worker, ep)
	}
	return w.workLoop(ctx, c.t, worker, ep, c, c.stdout, c.stderr)
}

// view reads the lanes and leases once (git: one fetch), saying the
// backend's notices.
func (c *claimsRun) view(ctx context.Context) (*claims.View, error) {
	v, err := c.b.View(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.where, err)
	}
	for _, n := range backendNotices(v.Snapshot) {
		say(c.stderr, "warning: %s: %s", n.File, n.Message)
	}
	return v, nil
}

func (c *claimsRun) hardFail(err error) int { return fail(c.stderr, exitError, "%v", err) }

// slugArg is the plan a verb names: a slug, a rel or a file name.
func slugArg(arg string) string { return model.SlugOf(path.Base(arg)) }

// targetSlug is --slug, or the plan --path names.
func (c *claimsRun) targetSlug() (string, error) {
	switch {
	case c.w.slug != "":
		return c.w.slug, nil
	case c.w.path != "":
		return slugArg(c.w.path), nil
	}
	return "", errors.New("needs --path or --slug")
}

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
func (c *claimsRun) list(ctx context.Context, worker model.Worker, ep registry.Endpoint) int {
	v, err := c.view(ctx)
	if err != nil {
		return c.hardFail(err)
	}
	opt := c.w.options(c.t, ep)
	rows := model.Decide(v.Snapshot, worker, opt)
	age := time.Since(v.ReadAt)
	if c.w.jsonOut {
		caps := look.CapWarnings(c.t.Project, v.Snapshot.Leases, opt.Now)
		out := remoteListJSON{listJSON: buildListJSON(v.Snapshot, caps, rows, worker, opt.Now), Claims: c.b.Name(),
			ViewReadAt: v.ReadAt.UTC().Format(time.RFC3339Nano), ViewAge: age.Seconds(), ViewTip: v.Tip}
		return writeJSON(c.stdout, c.stderr, out)
	}
	printListTSV(c.stdout, c.stderr, v.Snapshot, rows, worker, opt)
	sayCaps(c.stderr, c.t.Project, worker, ep, v.Snapshot.Leases, opt.Now)
	// anchor's columns have no room for it: how old the view is goes to
	// stderr, with the comments.
	lanes := "lanes from this checkout"
	if v.Tip != "" {
		lanes = "lanes at " + short(v.Tip)
	}
	fmt.Fprintf(c.stderr, "# claims: %s, view read at %s (%s ago), %s\n", c.where,
		v.ReadAt.UTC().Format(time.RFC3339), age.Round(time.Millisecond), lanes)
	return exitOK
}

func short(oid string) string {
	if len(oid) > 12 {
		return oid[:12]
	}
	return oid
}

// holder is who this run acts as.
func (c *claimsRun) holder() claims.Holder {
	return claims.Holder{AgentID: c.w.agent, Host: look.Hostname(), PID: os.Getpid()}
}

// act is one operator verb on a fresh view, through the one engine call
// every face makes (claims.Act), as this worker.
func (c *claimsRun) act(ctx context.Context, op claims.Op) (claims.Result, error) {
	v, err := c.view(ctx)
	if err != nil {
		return claims.Result{}, err
	}
	op.Holder, op.Token, op.Force, op.TTL = c.holder(), c.w.token, c.w.force, c.ttl
	return claims.Act(ctx, c.b, v, op)
}

func (c *claimsRun) heartbeat(ctx context.Context) int {
	slug := slugArg(c.w.heartbeat)
	v, err := c.view(ctx)
	if err != nil {
		return c.hardFail(err)
	}
	held, err := claims.HeldFrom(v, slug, c.w.agent, c.w.token)
	if err != nil {
		return c.hardFail(err)
	}
	if _, err := c.b.Renew(ctx, held, c.ttl); err != nil {
		return c.hardFail(fmt.Errorf("%s: lease not renewed: %w", slug, err))
	}
	fmt.Fprintln(c.stdout, held.Rel)
	return exitOK
}

func (c *claimsRun) release(ctx context.Context) int {
	res, err := c.act(ctx, claims.Op{Verb: model.Release, Slug: slugArg(c.w.release)})
	switch {
	case errors.Is(err, claims.ErrNoLease), errors.Is(err, claims.ErrNoPlan):
		fmt.Fprintln(c.stdout, "no lease "+c.w.release)
		return exitOK
	case err != nil:
		return c.hardFail(err)
	}
	fmt.Fprintf(c.stdout, "released %s\n", res.Rel)
	return exitOK
}

// recover takes over the named plan's expired lease. Too early (the lease
// not yet seen unchanged for TTL plus grace on this machine), nobody's
// lease, or another recoverer first: exit 1.
func (c *claimsRun) recover(ctx context.Context) int {
	slug, err := c.targetSlug()
	if err != nil {
		return fail(c.stderr, exitError, "--recover: %v", err)
	}
	res, err := c.act(ctx, claims.Op{Verb: model.Recover, Slug: slug})
	var early *claims.TooEarlyError
	switch {
	case errors.As(err, &early):
		return fail(c.stderr, exitNothing, "%v", early)
	case errors.Is(err, claims.ErrNoLease), errors.Is(err, claims.ErrLost), errors.Is(err, claims.ErrNoPlan):
		return fail(c.stderr, exitNothing, "--recover: %v", err)
	case err != nil:
		return c.hardFail(fmt.Errorf("%s: %w", c.where, err))
	}
	fmt.Fprintln(c.stdout, c.t.Abs(res.Rel))
	return exitOK
}

// parkOrReturn moves the named plan on the integration branch; a lease on
// it goes in the same step (the caller's own, or anyone's with --force).
func (c *claimsRun) parkOrReturn(ctx context.Context) int {
	flag, op := "--return-ready", claims.Op{Verb: model.Return, To: model.Lane(c.w.targetLane)}
	if c.w.park != "" {
		flag, op = "--park", claims.Op{Verb: model.Park, To: model.Lane(c.w.park)}
	}
	slug, err := c.targetSlug()
	if err != nil {
		return fail(c.stderr, exitError, "%s: %v", flag, err)
	}
	op.Slug = slug
	res, err := c.act(ctx, op)
	switch {
	case errors.Is(err, claims.ErrNoPlan), errors.Is(err, claims.ErrLost):
		return fail(c.stderr, exitNothing, "%s: %v", flag, err)
	case errors.Is(err, claims.ErrNotHolder):
		return fail(c.stderr, exitError, "%s: %v (--force overrides)", flag, err)
	case err != nil:
		return c.hardFail(fmt.Errorf("%s: %w", flag, err))
	}
	fmt.Fprintln(c.stdout, c.t.Abs(res.Rel))
	return exitOK
}
