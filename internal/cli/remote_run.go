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

	"fleetwatch/claims"
	"fleetwatch/internal/gitenv"
	"fleetwatch/model"
	"fleetwatch/planfs"
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
	wt, code := r.worktree(held, tip, &head)
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
	k.push() // when it stops, whatever the outcome
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
	if !r.w.ensureWT && !r.w.run {
		return "", exitOK
	}
	if err := r.seedFeature(held.Slug, tip); err != nil {
		say(r.stderr, "warning: %v", err)
	}
	wt, err := workers.Ensure(r.t.Project, r.w.agent, held.Slug)
	if err != nil {
		return "", fail(r.stderr, exitError, "--ensure-worktree: %v (the plan stays claimed: %s)", err, held.Rel)
	}
	if wt.HandOff != nil {
		say(r.stderr, "%s", wt.HandOff)
	}
	fmt.Fprintf(out, "WORKTREE=%s\nBRANCH=%s\nINTEGRATION=%s\n", wt.Path, wt.Branch, wt.Integration)
	if port, ok := workers.PortOf(r.t.Project, r.w.agent); ok {
		fmt.Fprintf(out, "PORT=%d\n", port)
	}
	return wt.Path, exitOK
}

// seedFeature makes the local feature/<slug> start where the remote's
// does: created from it, or fast-forwarded to it when not checked out;
// created from tip when the remote has none. It never moves a branch
// backwards, so no local commit is lost.
func (r *remote) seedFeature(slug, tip string) error {
	branch := workers.FeatureBranch(slug)
	ref := "refs/heads/" + branch
	project := r.t.Project
	_, ferr := gitRun(project, "fetch", "--no-tags", "--quiet", r.remote, ref)
	remoteOID := ""
	if ferr == nil {
		remoteOID, _ = gitRun(project, "rev-parse", "--verify", "--quiet", "FETCH_HEAD^{commit}")
	}
	local, _ := gitRun(project, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	switch {
	case remoteOID != "" && local == "":
		_, err := gitRun(project, "branch", branch, remoteOID)
		return err
	case remoteOID != "" && local != remoteOID:
		if _, err := gitRun(project, "merge-base", "--is-ancestor", local, remoteOID); err != nil {
			return fmt.Errorf("%s: the local branch has commits the remote's lacks; keeping it", branch)
		}
		if _, err := gitRun(project, "branch", "-f", branch, remoteOID); err != nil {
			return fmt.Errorf("%s: cannot fast-forward to %s's: %v", branch, r.remote, err)
		}
	case remoteOID == "" && local == "" && tip != "":
		if _, err := gitRun(project, "branch", branch, tip); err != nil {
			return fmt.Errorf("%s: cannot start it at %s: %v", branch, short(tip), err)
		}
	}
	return nil
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
