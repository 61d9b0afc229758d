package workers

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/workers/coord"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/seat"
)

// What the driver is handed for a claimed plan: which turn it is (plan or
// build, the coordinator's files), what the build may touch, and the
// worktree's backend.

// approvedLimit bounds how much of an approved plan is read for its scope:
// as much as of a plan.
const approvedLimit = 64 << 10

// jobFor is the job for a claimed plan. An error gives the plan back with
// it as the reason.
func (w *WorkOnce) jobFor(rel, token, wt string, port int) (Job, error) {
	job := Job{Rel: rel, Token: token, Worktree: wt, Port: port, Mode: proc.ModeBuild}
	if err := w.turnFor(&job); err != nil {
		return job, err
	}
	if err := w.scopeFor(&job); err != nil {
		return job, err
	}
	if err := w.backendFor(&job); err != nil {
		return job, err
	}
	return job, nil
}

// turnFor decides a plan-first plan's turn. A plan is plan first when the
// endpoint says so (plan_first), its header does (`- **Plan first:** yes`),
// or this run resumed it from the inbox (a worker of another endpoint took
// over a gone agent's approved plan). The coordinator's files then decide:
// approved → a build of the approved text; rejected or never decided → a
// plan turn writing the next proposal, with the rejection's note.
func (w *WorkOnce) turnFor(job *Job) error {
	planFirst, err := w.planFirst(job.Rel)
	if err != nil || !planFirst {
		return err
	}
	project := w.Tree.Project
	slug := model.SlugOf(path.Base(job.Rel))
	turn, err := coord.NextTurn(project, slug)
	if err != nil {
		return fmt.Errorf("plan first: %v", err)
	}
	if w.resumed[job.Rel] && turn.Decision != nil {
		_ = coord.MarkResumed(project, slug) // a note for faces; the lease is what counts
	}
	if !turn.Plan {
		job.ApprovedPlan = turn.ApprovedPlan
		return nil
	}
	job.Mode, job.Proposal, job.ProposalN, job.Feedback = proc.ModePlan, turn.Proposal, turn.N, turn.Feedback
	job.RunID = newRunID()
	if w.Endpoint.PlanCommand != nil {
		argv, err := proc.CheckExecutor(w.Endpoint.PlanCommand, project)
		if err != nil {
			return fmt.Errorf("endpoint %s plan_command: %v", w.Endpoint.Name, err)
		}
		job.Argv = argv
	}
	return nil
}

// planFirst reports whether rel's run starts with a plan turn (or builds
// an approved plan): see turnFor.
func (w *WorkOnce) planFirst(rel string) (bool, error) {
	if w.Endpoint.PlanFirst || w.resumed[rel] {
		return true, nil
	}
	text, _, err := w.Tree.ReadPlan(rel)
	if err != nil {
		return false, fmt.Errorf("plan first: %v", err)
	}
	return model.ParseHeader(text).PlanFirst, nil
}

// newRunID names one run in a proposal's authorship record.
func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// scopeFor fills the scanner's part of job: what the build may touch (the
// `## Files in scope` of the approved plan, else of the plan itself, plus
// the plan's Allowed generated files), whether a violation stops it, and
// the integration branch the change is measured from. A plan turn has no
// scope (only .plans/ is checked); an agent with no worktree runs in the
// project root, where nothing is scanned.
func (w *WorkOnce) scopeFor(job *Job) error {
	if job.Worktree == "" {
		return nil
	}
	if job.Mode != proc.ModePlan {
		text, _, err := w.Tree.ReadPlan(job.Rel)
		if err != nil {
			return err
		}
		scopeText := text
		if job.ApprovedPlan != "" {
			if scopeText, err = readBounded(job.ApprovedPlan, approvedLimit); err != nil {
				return fmt.Errorf("approved plan %s: %v", job.ApprovedPlan, err)
			}
		}
		if sc, found, _ := model.ParseScope(scopeText); found {
			job.Scope = &model.Scope{Patterns: sc.Patterns, Allowed: model.ParseHeader(text).AllowedGenerated}
		}
	}
	stop := w.Endpoint.OnScopeViolation
	if stop == "" {
		s, err := config.Load(w.Tree.Project)
		if err != nil {
			return err
		}
		stop = s.OnScopeViolation
	}
	job.StopOnViolation = stop == "stop"
	if wt, ok, err := look.Lookup(w.Tree.Project, w.Worker.AgentID); err == nil && ok && wt.Integration != "" {
		job.Base = model.BranchRef(wt.Integration)
	}
	return nil
}

// readBounded reads at most limit bytes of the regular file p.
func readBounded(p string, limit int64) (string, error) {
	// Non-blocking: opening a FIFO for reading would wait for a writer.
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, limit))
	return string(data), err
}

// backendFor prepares the worktree's backend (fleetwatch.yaml `worktree:`):
// the agent's port block, .env.fleetwatch and, the first time or for
// another plan, teardown and setup. Without the section, or without a
// worktree, the job keeps the one port it has and nothing is written.
func (w *WorkOnce) backendFor(job *Job) error {
	if job.Port > 0 {
		job.Ports = []int{job.Port}
	}
	project, agent := w.Tree.Project, w.Worker.AgentID
	s, err := config.Load(project)
	if err != nil {
		return err
	}
	if !s.Worktree.Set() || job.Worktree == "" {
		return nil
	}
	ports, err := look.AssignPorts(project, agent, w.Ports, max(s.Worktree.Ports, 1))
	if err != nil {
		return err
	}
	slug := model.SlugOf(path.Base(job.Rel))
	b, err := seat.PrepareBackend(project, s.Worktree, agent, slug, job.Worktree, ports)
	if err != nil {
		return err
	}
	job.Port, job.Ports, job.Env = ports[0], b.Ports, b.Env
	return nil
}

// planRefusal judges plan names by the project's `worktree: env` templates
// (model.Options.Refuse), so a plan whose name they refuse is skipped by
// the pick instead of failing every claim of every worker. It applies to
// a worker whose claims get a worktree with a backend (--ensure-worktree
// with --run), and to a listing of what such a worker skips. nil when
// fleetwatch.yaml has no such section (or does not parse: the claim says
// so).
func planRefusal(project, agentID string) func(*model.Plan) string {
	s, err := config.Load(project)
	if err != nil {
		return nil
	}
	judge := seat.BackendRefusal(project, s.Worktree, agentID)
	if judge == nil {
		return nil
	}
	return func(p *model.Plan) string { return judge(p.Slug) }
}
