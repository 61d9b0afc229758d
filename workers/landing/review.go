package landing

// A peer review runs another worker's agent on a frozen commit: a detached
// throwaway worktree at the branch tip under var/fleet/reviews/wt/, the
// endpoint's review_command (else its command, else the registry's
// executor) with {mode}=review, {commit} and {base}, and FLEET_REVIEW naming
// a file outside the worktree for the verdict. The worktree is checked
// afterwards: a reviewer that wrote anything, or moved HEAD, is refused and
// nothing is stored. The worktree always goes; one left by a killed run
// (its owner's pid gone) is removed by the next review.

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/agentfile"
	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers/egress"
	"github.com/fleetwatch/fleetwatch/workers/forge"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/seat"
)

// DefaultPeerTimeout bounds a reviewer's run when PeerOptions say nothing.
const DefaultPeerTimeout = 30 * time.Minute

const (
	reviewWorktrees = "var/fleet/reviews/wt"
	reviewLogs      = "var/fleet/logs"
)

// maxReviewText bounds the verdict read from stdout or $FLEET_REVIEW.
const maxReviewText = 1 << 20

// Approve records a person's approve of slug's current tip. It is refused
// in an agent run (FLEET_AGENT_ID set), for a plan not in review-needed/,
// and for a branch that is missing or not ahead of the integration branch.
func Approve(t *planfs.Tree, slug, by string) (Approval, error) {
	if err := writable(t, slug); err != nil {
		return Approval{}, err
	}
	if err := ownBranch(t, slug); err != nil {
		return Approval{}, err
	}
	c, err := candidateOf(t, slug)
	if err != nil {
		return Approval{}, err
	}
	ap, err := t.WriteApproval(slug, c.tip, planfs.Agent(by))
	if err != nil {
		return Approval{}, err
	}
	return Approval{Commit: ap.Commit, By: ap.By, At: ap.At}, nil
}

// candidate is what a review or an approve needs of slug's branch, read
// now and never stored.
type candidate struct {
	branch, integration, tip, base string
}

// candidateOf resolves slug's plan, branch and integration branch without
// creating anything.
func candidateOf(t *planfs.Tree, slug string) (candidate, error) {
	if err := planfs.ValidSlug(slug); err != nil {
		return candidate{}, refused("%v", err)
	}
	if !inReview(t, slug) {
		return candidate{}, refused("%s is not in review-needed/", slug)
	}
	s, err := config.Load(t.Project)
	if err != nil {
		return candidate{}, err
	}
	c := candidate{branch: model.FeatureBranch(slug)}
	if c.integration, err = Integration(t.Project, s); err != nil {
		return candidate{}, err
	}
	if c.tip = revParse(t.Project, model.BranchRef(c.branch)); c.tip == "" {
		return candidate{}, refused("%s has no branch %s", slug, c.branch)
	}
	if c.base, err = git(t.Project, "merge-base", model.BranchRef(c.integration), c.tip); err != nil {
		return candidate{}, fmt.Errorf("%s: %v", c.branch, err)
	}
	if c.base == c.tip {
		return candidate{}, refused("%s is not ahead of %s: nothing to review", c.branch, c.integration)
	}
	return c, nil
}

// Peer runs a peer review of slug's branch tip in the foreground and
// stores the verdict.
func Peer(ctx context.Context, t *planfs.Tree, slug string, opt PeerOptions) (Review, error) {
	if err := writable(t, slug); err != nil {
		return Review{}, err
	}
	c, err := candidateOf(t, slug)
	if err != nil {
		return Review{}, err
	}
	regPath := cmp.Or(opt.Registry, registry.Path(t.Project))
	reg, err := registry.Load(regPath)
	if err != nil {
		return Review{}, err
	}
	ep, agent, self, err := reviewerOf(t, reg, slug, opt)
	if err != nil {
		return Review{}, err
	}
	argv := reviewArgv(ep, reg)
	if len(argv) == 0 {
		return Review{}, fmt.Errorf("%s: endpoint %q has no review_command or command, and there is no executor", regPath, ep.Name)
	}
	logf(opt.Log, "peer review of %s at %s by %s (endpoint %s)", c.branch, short(c.tip), agent, ep.Name)
	cleanReviewWorktrees(t.Project)
	wt, err := addReviewWorktree(t.Project, slug, c.tip)
	if err != nil {
		return Review{}, err
	}
	defer dropReviewWorktree(t.Project, wt)
	benv, done, err := reviewBackend(t.Project, "review-"+agent, slug, wt, opt.Log)
	if err != nil {
		return Review{}, err
	}
	defer done() // before the worktree goes
	outDir, err := os.MkdirTemp("", "fw-review-")
	if err != nil {
		return Review{}, err
	}
	defer os.RemoveAll(outDir)
	out := filepath.Join(outDir, "review.md")
	if err := ep.PrepareHome(); err != nil {
		return Review{}, err
	}
	rr := reviewRun{slug: slug, agent: agent, ep: ep, grants: reg.SandboxWriteFor(ep), wt: wt, c: c, benv: benv, argv: argv, out: out}
	verdict, findings, err := reviewVerdict(ctx, t, rr, opt)
	if err != nil {
		t.LogEvent(planfs.Event{Event: "review-refused", Slug: slug, AgentID: agent, Reason: err.Error()})
		return Review{}, err
	}
	rf := planfs.ReviewFile{Slug: slug, Commit: c.tip, Reviewer: agent, Endpoint: ep.Name, Base: c.base, Verdict: verdict, At: t.Now(), Self: self}
	path, err := t.WriteReview(rf, findings)
	if err != nil {
		return Review{}, err
	}
	logf(opt.Log, "%s: %s (%s)", agent, verdict, path)
	if w := forgeReview(t, slug, forge.ReviewIn{Commit: c.tip, RequestChanges: verdict == "REVISE",
		Body: fmt.Sprintf("Peer review by `%s` (%s): **%s**\n\n%s", agent, ep.Name, verdict, findings)}); w != "" {
		logf(opt.Log, "warning: %s", w)
	}
	return Review{Commit: c.tip, Reviewer: agent, Endpoint: ep.Name, Base: c.base, Verdict: verdict, At: rf.At, Path: path, Self: self}, nil
}

// reviewVerdict runs the reviewer and reads its verdict: from its file,
// else its stdout. A reviewer that wrote in its worktree, left a file that
// cannot be read or gave no verdict is refused.
func reviewVerdict(ctx context.Context, t *planfs.Tree, rr reviewRun, opt PeerOptions) (verdict string, findings []byte, err error) {
	stdout, err := meteredReview(ctx, t, rr, opt)
	if err != nil {
		return "", nil, err
	}
	if wrote := wroteIn(rr.wt, rr.c.tip); wrote != "" {
		return "", nil, refused("the reviewer wrote in its worktree: %s; reviews are read-only, nothing stored", wrote)
	}
	// The reviewer's to make: a FIFO or a device there is refused, never
	// waited on.
	text, err := agentfile.Read(rr.out, maxReviewText)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", nil, refused("the reviewer's verdict file cannot be read: %v", err)
	}
	if len(bytes.TrimSpace(text)) == 0 {
		text = stdout
	}
	verdict, findings = parseVerdict(text)
	if verdict == "" {
		return "", nil, refused("no verdict from %s: the first line must be ACCEPT, REVISE or ESCALATE (log: %s)", rr.agent, reviewLogRel(rr.slug))
	}
	return verdict, findings, nil
}

// reviewRun is one reviewer's run: who, on what, where.
type reviewRun struct {
	slug, agent string
	ep          registry.Endpoint
	grants      []string
	wt          string
	c           candidate
	benv        seat.Backend
	argv        []string
	out         string
}

// meteredReview runs the reviewer as a driver runs a build: metered (a
// proxy in front of its endpoint's base_url, $FLEET_USAGE beside its
// review) and recorded in the usage ledger, whatever its end.
func meteredReview(ctx context.Context, t *planfs.Tree, rr reviewRun, opt PeerOptions) ([]byte, error) {
	mtr, meterEnv, baseURL, err := ledger.NewRunMeter(rr.ep.Upstream(), filepath.Dir(rr.out))
	if err != nil {
		return nil, fmt.Errorf("cannot start the review's metering proxy: %v", err)
	}
	ph := proc.Placeholders{Plan: t.Abs(reviewRel(rr.slug)), Worktree: rr.wt, AgentID: rr.agent, Model: rr.ep.Model,
		BaseURL: baseURL, Slug: rr.slug, Root: rr.wt, Mode: "review", Commit: rr.c.tip, Base: rr.c.base, Ports: rr.benv.Ports}
	if len(rr.benv.Ports) > 0 {
		ph.Port = rr.benv.Ports[0]
	}
	env := append(append(rr.benv.Env, meterEnv...), ph.Expand(rr.ep.AgentEnv())...)
	stdout, err := runReviewer(ctx, t.Project, rr.slug, rr.wt, ph, env, rr.argv, rr.out, grant{write: rr.grants, hosts: rr.ep.ModelHosts()}, cmp.Or(opt.Timeout, DefaultPeerTimeout))
	run := ledger.Run{Plan: rr.slug, Agent: rr.agent, Host: look.Hostname(), Tier: rr.ep.Tier, Endpoint: rr.ep.Name, Model: rr.ep.Model, Mode: proc.ModeReview}
	if err != nil {
		run.Exit = 1
	}
	if rerr := mtr.Record(t.Project, run, stdout); rerr != nil {
		logf(opt.Log, "%v", rerr)
	}
	return stdout, err
}

// reviewBackend is a review worktree's own backend (fleetwatch.yaml
// `worktree:`), never a worker's: under the pseudo agent id review-<agent>,
// as the reviewer may be a worker too. done tears it down and gives its
// ports back; without the section there is nothing to do.
func reviewBackend(project, id, slug, wt string, log io.Writer) (seat.Backend, func(), error) {
	s, err := config.Load(project)
	if err != nil {
		return seat.Backend{}, nil, err
	}
	b, done, err := seat.OwnBackend(project, s.Worktree, id, slug, wt)
	if err != nil {
		return b, nil, err
	}
	return b, func() {
		if err := done(); err != nil {
			logf(log, "%v", err)
		}
	}, nil
}

// reviewArgv is the command a review runs: the endpoint's review_command,
// else its command, else the registry's executor.
func reviewArgv(ep registry.Endpoint, reg *registry.Registry) []string {
	for _, argv := range [][]string{ep.ReviewCommand, ep.Command, reg.Executor} {
		if len(argv) > 0 {
			return slices.Clone(argv)
		}
	}
	return nil
}

// reviewerOf is who reviews slug's change: the endpoint, the agent id, and
// whether the endpoint is the author's own (refused without AllowSelf).
func reviewerOf(t *planfs.Tree, reg *registry.Registry, slug string, opt PeerOptions) (registry.Endpoint, string, bool, error) {
	author := t.Author(slug)
	authorTier, authorEp := authorOf(reg, t.Project, author)
	ep, err := chooseReviewer(reg, authorTier, authorEp, author, opt.Endpoint)
	if err != nil {
		return ep, "", false, err
	}
	agent := cmp.Or(opt.AgentID, "review-"+ep.Name)
	if author != "" && agent == author {
		return ep, "", false, refused("%s is the author of %s and cannot review its own change; name another --agent-id or --endpoint", agent, slug)
	}
	self := authorEp != "" && ep.Name == authorEp
	if self && !opt.AllowSelf {
		return ep, "", false, refused("%s was written by endpoint %s, which would review its own change: a peer review is by another endpoint (add one to %s or name it with --endpoint), or pass --allow-self", slug, ep.Name, reg.Path)
	}
	if self {
		logf(opt.Log, "self-review: endpoint %s wrote %s and reviews it (--allow-self)", ep.Name, slug)
	}
	return ep, agent, self, nil
}

// chooseReviewer is the endpoint named, else the first whose tier is at
// least the author's and which is not the author's own endpoint, else (the
// only one that fits) the author's own: Peer refuses that without
// AllowSelf.
func chooseReviewer(reg *registry.Registry, authorTier model.Tier, authorEp, author, want string) (registry.Endpoint, error) {
	if want != "" {
		for _, ep := range reg.Endpoints {
			if ep.Name == want {
				return ep, nil
			}
		}
		return registry.Endpoint{}, refused("no endpoint %q in %s", want, reg.Path)
	}
	var fits []registry.Endpoint
	for _, ep := range reg.Endpoints {
		if tier, err := model.ParseTier(ep.Tier); err == nil && tier >= authorTier {
			fits = append(fits, ep)
		}
	}
	for _, ep := range fits {
		if ep.Name != authorEp {
			return ep, nil
		}
	}
	if len(fits) > 0 {
		return fits[0], nil
	}
	if authorTier != model.NoTier {
		return registry.Endpoint{}, refused("no endpoint in %s of tier %s or higher to review %s's change", reg.Path, authorTier, author)
	}
	return registry.Endpoint{}, refused("no endpoint in %s to review with", reg.Path)
}

// authorOf is the tier and endpoint the author's worker ran as, from its
// state file: the endpoint it names, else the one of its model and tier.
// NoTier and "" when no state says.
func authorOf(reg *registry.Registry, project, author string) (model.Tier, string) {
	if author == "" {
		return model.NoTier, ""
	}
	tier, name := model.NoTier, ""
	states, _ := look.ReadStates(project)
	for _, st := range states {
		if st.AgentID != author {
			continue
		}
		tier, _ = model.ParseTier(st.Tier)
		name = ""
		for _, ep := range reg.Endpoints {
			if ep.Name == st.Endpoint || st.Endpoint == "" && ep.Model == st.Model && ep.Tier == st.Tier {
				name = ep.Name
				break
			}
		}
	}
	return tier, name
}

// addReviewWorktree makes a detached worktree of commit, named after slug
// and this process so a leftover can be told from a live one.
func addReviewWorktree(project, slug, commit string) (string, error) {
	dir, err := safepath.MkdirAll(project, reviewWorktrees)
	if err != nil {
		return "", fmt.Errorf("cannot make %s: %v", reviewWorktrees, err)
	}
	wt := filepath.Join(dir, fmt.Sprintf("%s.%d.%s", slug, os.Getpid(), randomSuffix()))
	if _, err := git(project, "worktree", "add", "--detach", "--quiet", wt, commit); err != nil {
		os.RemoveAll(wt)
		return "", fmt.Errorf("cannot make the review worktree: %v", err)
	}
	return wt, nil
}

// dropReviewWorktree removes wt and git's record of it.
func dropReviewWorktree(project, wt string) {
	_, _ = git(project, "worktree", "remove", "--force", "--force", wt)
	os.RemoveAll(wt)
	_, _ = git(project, "worktree", "prune")
}

// cleanReviewWorktrees removes review worktrees whose run is gone (a
// killed fleetwatch): the pid in the name is not alive here.
func cleanReviewWorktrees(project string) {
	entries, _ := os.ReadDir(filepath.Join(project, filepath.FromSlash(reviewWorktrees)))
	for _, e := range entries {
		parts := strings.Split(e.Name(), ".")
		if len(parts) < 3 {
			continue
		}
		pid, err := strconv.Atoi(parts[len(parts)-2])
		if err != nil || pid <= 0 || pid == os.Getpid() || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		wt := filepath.Join(project, filepath.FromSlash(reviewWorktrees), e.Name())
		_ = seat.TeardownBackendsIn(project, wt)
		dropReviewWorktree(project, wt)
	}
}

func reviewLogRel(slug string) string { return reviewLogs + "/review-" + slug + ".log" }

// runReviewer runs argv in wt in its own process group, its stdout and
// stderr into the review log; it returns stdout (capped). A run that does
// not exit within timeout, or exits non-zero, is an error.
func runReviewer(ctx context.Context, project, slug, wt string, ph proc.Placeholders, env, argv []string, out string, g grant, timeout time.Duration) ([]byte, error) {
	argv = ph.Expand(argv)
	argv, err := proc.CheckExecutor(argv, project)
	if err != nil {
		return nil, err
	}
	if _, err := safepath.MkdirAll(project, reviewLogs); err != nil {
		return nil, fmt.Errorf("cannot make %s: %v", reviewLogs, err)
	}
	logFile, err := safepath.OpenFile(project, reviewLogRel(slug), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %v", reviewLogRel(slug), err)
	}
	defer logFile.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = wt
	cmd.Env = gitenv.Env(append(append(ph.Env(), env...), "PWD="+wt, "FLEET_REVIEW="+out)...)
	cmd.Stdin = nil
	stdout := cappedBuffer{limit: maxReviewText}
	cmd.Stdout = io.MultiWriter(&stdout, logFile)
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	sandbox.SetPdeathsig(cmd.SysProcAttr, syscall.SIGKILL)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	// A reviewer reads; it writes only $FLEET_REVIEW's folder (its own)
	// and what its endpoint grants,
	// and connects to its own ports and its metering proxy.
	connect := append([]int{ph.Port}, ph.Ports...)
	if port, ok := egress.PortOf(ph.BaseURL); ok {
		connect = append(connect, int(port))
	}
	g.write, g.connect, g.log = append([]string{filepath.Dir(out)}, g.write...), connect, logFile
	release, done, err := startContained(project, cmd, g)
	if err == nil {
		err = cmd.Wait()
		release()
		done()
	}
	if cmd.Process != nil {
		// Whatever the reviewer left running must not outlive its worktree.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, refused("the reviewer %s did not finish within %v; killed (log: %s)", ph.AgentID, timeout, reviewLogRel(slug))
	case ctx.Err() != nil:
		return nil, fmt.Errorf("the review of %s was cancelled", slug)
	case err != nil:
		return nil, refused("the reviewer %s failed: %v (log: %s)", ph.AgentID, err, reviewLogRel(slug))
	}
	return stdout.Bytes(), nil
}

// cappedBuffer keeps the first limit bytes written to it.
type cappedBuffer struct {
	bytes.Buffer
	limit int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// wroteIn says what the reviewer changed in wt ("" when nothing): paths git
// sees modified or untracked, or HEAD moved off tip. git there follows the
// project's record of the worktree, whatever the reviewer left at its .git
// (gitenv.Pin).
func wroteIn(wt, tip string) string {
	var what []string
	if head := revParse(wt, "HEAD"); head != tip {
		what = append(what, "HEAD moved to "+cmp.Or(short(head), "nothing"))
	}
	// Untrimmed: the first line may start with a space (" M path").
	status, err := gitenv.Run(context.Background(), gitenv.Call{Dir: wt, Args: []string{"status", "--porcelain", "--ignored=no", "--untracked-files=all"}})
	if err != nil {
		return "cannot check: " + err.Error()
	}
	for _, line := range strings.Split(string(status.Out), "\n") {
		if len(line) > 3 {
			what = append(what, line[3:])
		}
	}
	if len(what) > 5 {
		what = append(what[:5], fmt.Sprintf("and %d more", len(what)-5))
	}
	return strings.Join(what, ", ")
}

// parseVerdict reads the verdict from the first non-empty line (markdown
// marks around it allowed: "# ACCEPT", "**REVISE**") and returns the rest
// as the findings; "" when there is none.
func parseVerdict(text []byte) (string, []byte) {
	rest := string(text)
	for rest != "" {
		line, after, _ := strings.Cut(rest, "\n")
		rest = after
		if strings.TrimSpace(line) == "" {
			continue
		}
		line = strings.TrimLeft(strings.TrimSpace(line), "#*_` ")
		end := strings.IndexFunc(line, func(r rune) bool { return r < 'A' || r > 'Z' })
		if end < 0 {
			end = len(line)
		}
		word := line[:end]
		if !slices.Contains(planfs.Verdicts, word) || end < len(line) && !strings.ContainsRune(":.!*_` ", rune(line[end])) {
			return "", nil
		}
		findings := strings.TrimLeft(rest, "\n")
		// "ACCEPT: looks good" keeps its words as the first finding.
		if more := strings.TrimSpace(strings.TrimLeft(line[end:], ":.!*_` ")); more != "" {
			findings = more + "\n\n" + findings
		}
		return word, []byte(findings)
	}
	return "", nil
}
