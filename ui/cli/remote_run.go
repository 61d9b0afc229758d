package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"fleetwatch/internal/gitenv"
	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/planfs/claims"
	"fleetwatch/registry"
	"fleetwatch/workers"
)

// gitTimeout bounds each fetch and push of a feature branch.
const gitTimeout = 60 * time.Second

// runLoop is --run over a remote backend: claim, hand the plan to the
// executor through a driver whose Keeper is the backend's lease, repeat up
// to --max-plans.
func (r *remote) runLoop(ctx context.Context, worker model.Worker, ep registry.Endpoint) int {
	w, t := r.w, r.t
	w.ep = ep
	argv, err := w.executor(t, ep)
	if err != nil {
		return fail(r.stderr, exitError, "--run: %v", err)
	}
	_, hadPort := workers.PortOf(t.Project, worker.AgentID)
	port, err := workers.AssignPort(t.Project, worker.AgentID, w.ports)
	if err != nil {
		return fail(r.stderr, exitError, "--run: %v", err)
	}
	if !hadPort {
		defer func() {
			if !w.started {
				_ = workers.ReleasePort(t.Project, worker.AgentID, port)
			}
		}()
	}
	if err := workers.BecomeSubreaper(); err != nil {
		say(r.stderr, "warning: cannot become a child subreaper: %v", err)
	}
	var echo io.Writer
	if isTerminal(r.stderr) {
		echo = r.stderr
	}
	d, err := w.newDriver(t, worker, ep, argv)
	if err == nil {
		err = d.Start(echo)
	}
	if err != nil {
		if errors.Is(err, workers.ErrBusy) {
			return fail(r.stderr, exitNothing, "--run: %v", err)
		}
		return fail(r.stderr, exitError, "--run: %v", err)
	}
	if s, ok := r.b.(claims.Sessioner); ok {
		if err := s.StartSession(ctx, r.ttl); err != nil {
			code := fail(r.stderr, exitError, "%s: %v", r.where, err)
			d.Finish(code, "no claims session")
			return code
		}
	}
	code, note := r.runEach(ctx, worker, d, port)
	d.Finish(code, note)
	return code
}

func (r *remote) runEach(ctx context.Context, worker model.Worker, d *workers.Driver, port int) (int, string) {
	skip := map[string]bool{}
	claimed, worked := 0, 0
	for claimed < r.w.maxPlans {
		held, v, code := r.claimOne(ctx, worker, skip)
		if code >= 0 {
			return code, "could not claim"
		}
		if held.Slug == "" {
			break
		}
		claimed++
		skip[held.Slug] = true
		d.Claimed(held.Rel)
		o, code, note := r.work(ctx, d, held, v, port)
		if code != exitOK {
			return code, note
		}
		fmt.Fprintln(r.stdout, r.t.Abs(o.Plan))
		worked++
		if r.w.slug != "" || r.w.path != "" {
			break
		}
	}
	if claimed == 0 {
		return exitNothing, "nothing to claim"
	}
	return exitOK, fmt.Sprintf("worked %d plan(s)", worked)
}

// work runs the executor on one claimed plan in its worktree, and pushes
// its feature branch whatever the outcome, so the next owner has every
// commit.
func (r *remote) work(ctx context.Context, d *workers.Driver, held claims.Held, v *claims.View, port int) (workers.Outcome, int, string) {
	k := r.keeper(held, d.Log)
	var head bytes.Buffer
	fmt.Fprintln(&head, r.t.Abs(held.Rel))
	tip := ""
	if v != nil {
		tip = v.Tip
	}
	wt, base, code := r.seededWorktree(held, tip, &head)
	k.base, k.baseKnown = base.oid, base.ok
	if code != exitOK {
		reason := "no worktree for " + held.Rel
		_, _ = k.Release(reason)
		return workers.Outcome{}, code, reason
	}
	job, err := r.w.jobFor(r.t, planfs.Claimed{Rel: held.Rel, Token: held.Lease.Token}, wt, port)
	if err != nil {
		reason := err.Error()
		if _, rerr := k.Release(reason); rerr != nil {
			return workers.Outcome{}, fail(r.stderr, exitError, "%s; could not release %s: %v", reason, held.Rel, rerr), reason
		}
		return workers.Outcome{}, fail(r.stderr, exitError, "%s; released %s", reason, held.Rel), reason
	}
	job.PlanFile = planInWorktree(r.t, wt, held.Rel)
	job.OnStart = func() {
		r.w.started = true
		r.stdout.Write(head.Bytes())
	}
	d.Keeper = k
	o := d.Run(ctx, job)
	d.Keeper = nil
	k.push() // when it stops, whatever the outcome (unless the lease is lost)
	if !o.OK() {
		return o, fail(r.stderr, exitError, "%s", o.Note), o.Note
	}
	return o, exitOK, o.Note
}

// planInWorktree is the plan file the agent reads: the worktree's copy
// (checked out from the integration branch the lanes were read at), else
// the project's own.
func planInWorktree(t *planfs.Tree, wt, rel string) string {
	plansDir, err := filepath.Rel(t.Project, t.Plans)
	if err == nil && wt != "" {
		p := filepath.Join(wt, plansDir, filepath.FromSlash(rel))
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return t.Abs(rel)
}

// worktree gives the agent its worktree on feature/<slug>, started from
// the remote's feature branch when it has one (a previous owner's work on
// another machine), else from tip, the integration commit the lanes were
// read at. It prints anchor's KEY=value lines to out.
func (r *remote) worktree(held claims.Held, tip string, out io.Writer) (string, int) {
	wt, _, code := r.seededWorktree(held, tip, out)
	return wt, code
}

// seededWorktree is worktree, also returning the remote's feature branch
// as the seeding saw it (see seedFeature), or ok false when it could not
// be read.
func (r *remote) seededWorktree(held claims.Held, tip string, out io.Writer) (wt string, base remoteBranch, code int) {
	if !r.w.ensureWT && !r.w.run {
		return "", remoteBranch{}, exitOK
	}
	base, err := r.seedFeature(held.Slug, tip)
	if err != nil {
		say(r.stderr, "warning: %v", err)
	}
	w, err := workers.Ensure(r.t.Project, r.w.agent, held.Slug)
	if err != nil {
		return "", base, fail(r.stderr, exitError, "--ensure-worktree: %v (the plan stays claimed: %s)", err, held.Rel)
	}
	if w.HandOff != nil {
		say(r.stderr, "%s", w.HandOff)
	}
	fmt.Fprintf(out, "WORKTREE=%s\nBRANCH=%s\nINTEGRATION=%s\n", w.Path, w.Branch, w.Integration)
	if port, ok := workers.PortOf(r.t.Project, r.w.agent); ok {
		fmt.Fprintf(out, "PORT=%d\n", port)
	}
	return w.Path, base, exitOK
}

// remoteBranch is a feature branch on the remote as one read saw it: oid
// "" when it has none; ok false when the read failed.
type remoteBranch struct {
	oid string
	ok  bool
}

// readRemoteBranch fetches ref (refs/heads/…) from the remote into
// refs/fleetwatch/remote/<remote>/heads/…, a ref of its own: FETCH_HEAD is
// shared with every other fetch in the checkout, and another driver's
// could replace it between the fetch and the read.
func readRemoteBranch(project, remote, ref string) (remoteBranch, error) {
	local := "refs/fleetwatch/remote/" + remote + "/heads/" + strings.TrimPrefix(ref, "refs/heads/")
	_, err := gitRun(project, "fetch", "--no-tags", "--quiet", "--no-write-fetch-head", remote, "+"+ref+":"+local)
	if err != nil {
		if strings.Contains(err.Error(), "couldn't find remote ref") {
			return remoteBranch{ok: true}, nil
		}
		return remoteBranch{}, err
	}
	oid, err := gitRun(project, "rev-parse", "--verify", "--quiet", local+"^{commit}")
	if err != nil {
		return remoteBranch{}, err
	}
	return remoteBranch{oid: oid, ok: true}, nil
}

// seedFeature makes the local feature/<slug> start where the remote's is:
// created from it, or moved to it, so a new holder (after a takeover)
// builds on whatever the last holder pushed and never pushes an older
// branch over it. A local branch ahead of the remote's stays (pushing it
// is a fast-forward); one that went another way is kept at a keep ref
// first, never lost. Created from tip when the remote has none. It
// returns the remote's branch as it saw it: where this holder's pushes
// move it from.
func (r *remote) seedFeature(slug, tip string) (remoteBranch, error) {
	branch := workers.FeatureBranch(slug)
	ref := "refs/heads/" + branch
	project := r.t.Project
	rb, ferr := readRemoteBranch(project, r.remote, ref)
	local, _ := gitRun(project, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	switch {
	case ferr != nil:
		return rb, fmt.Errorf("%s: cannot read %s's: %v", branch, r.remote, ferr)
	case rb.oid != "" && local == "":
		_, err := gitRun(project, "branch", branch, rb.oid)
		return rb, err
	case rb.oid != "" && local != rb.oid:
		if _, err := gitRun(project, "merge-base", "--is-ancestor", rb.oid, local); err == nil {
			return rb, nil // ahead: the push is a fast-forward
		}
		kept := ""
		if _, err := gitRun(project, "merge-base", "--is-ancestor", local, rb.oid); err != nil {
			var kerr error
			if kept, kerr = r.keepBranch(slug, local); kerr != nil {
				return rb, fmt.Errorf("%s: the local branch went another way than %s's, and cannot be kept aside (%v); keeping it, so pushes of it are refused", branch, r.remote, kerr)
			}
		}
		if err := moveBranch(project, r.w.agent, branch, local, rb.oid); err != nil {
			return rb, fmt.Errorf("%s: cannot move it to %s's %.12s: %v", branch, r.remote, rb.oid, err)
		}
		if kept != "" {
			say(r.stderr, "%s: started from %s's %.12s; the local commits it lacks (%.12s) are kept at %s", branch, r.remote, rb.oid, local, kept)
		}
	case rb.oid == "" && local == "" && tip != "":
		if _, err := gitRun(project, "branch", branch, tip); err != nil {
			return rb, fmt.Errorf("%s: cannot start it at %s: %v", branch, short(tip), err)
		}
	}
	return rb, nil
}

// keepBranch pins oid, a local feature branch about to be moved, at a new
// refs/fleetwatch/keep/<slug>/<unix> ref (create-only), and returns it.
func (r *remote) keepBranch(slug, oid string) (string, error) {
	base := fmt.Sprintf("refs/fleetwatch/keep/%s/%d", slug, time.Now().Unix())
	var err error
	for i := range 10 {
		ref := base
		if i > 0 {
			ref = fmt.Sprintf("%s-%d", base, i)
		}
		if _, err = gitRun(r.t.Project, "update-ref", ref, oid, ""); err == nil {
			return ref, nil
		}
	}
	return "", err
}

// moveBranch moves branch from old to oid: by compare-and-swap on the ref,
// or, when agent's own worktree has it checked out, by `reset --keep`
// there, which refuses rather than lose uncommitted changes. Another
// worktree's checkout is left alone: its agent may still be at work.
func moveBranch(project, agent, branch, old, oid string) error {
	wt := checkedOutAt(project, branch)
	if wt == "" {
		_, err := gitRun(project, "update-ref", "refs/heads/"+branch, oid, old)
		return err
	}
	own, ok, err := workers.Lookup(project, agent)
	if err != nil || !ok || !samePath(own.Path, wt) {
		return fmt.Errorf("it is checked out in %s", wt)
	}
	_, err = gitRun(wt, "reset", "--keep", "--quiet", oid)
	return err
}

// samePath reports whether a and b name the same folder.
func samePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// checkedOutAt is the worktree that has branch checked out, or "".
func checkedOutAt(project, branch string) string {
	out, err := gitRun(project, "worktree", "list", "--porcelain")
	if err != nil {
		return ""
	}
	wt := ""
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			wt = p
		} else if line == "branch refs/heads/"+branch {
			return wt
		}
	}
	return ""
}

// gitRun runs git in dir in its own process group, killed whole after
// gitTimeout, and returns its trimmed stdout; an error holds stderr's
// first line.
func gitRun(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := gitenv.Command(ctx, dir, args...)
	cmd.Env = append(cmd.Env, "GIT_TERMINAL_PROMPT=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	return strings.TrimSpace(out.String()), nil
}
