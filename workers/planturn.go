package workers

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/workers/coord"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// The plan-first half of the driver (the coordinator's inbox): a plan turn
// runs the endpoint's plan_command (or the executor with {mode} = plan),
// and when the agent exits 0 the driver records who wrote the proposal and
// leaves the plan waiting for approval.

// argvFor is the command line job runs: its own (a plan_command), else the
// driver's executor.
func (d *Driver) argvFor(job Job, ph *proc.Placeholders) []string {
	if job.Argv != nil {
		return job.Argv
	}
	if s, ok := d.resumable(job); ok {
		ph.Session = s.ID
		d.Log.Printf("resuming session %s of %s, which %s left at %s", s.ID, ph.Slug, s.Agent, s.At.Format(time.RFC3339))
		return d.Resume
	}
	return d.Argv
}

// resumable is the session a build of job's plan resumes: the last one a
// turn on this endpoint left, when the endpoint's agent can resume one.
func (d *Driver) resumable(job Job) (look.Session, bool) {
	if d.Resume == nil || cmp.Or(job.Mode, proc.ModeBuild) != proc.ModeBuild {
		return look.Session{}, false
	}
	s, ok := look.LastSession(d.Tree.Project, model.SlugOf(path.Base(job.Rel)))
	return s, ok && s.Endpoint == d.Endpoint
}

// keepSession records the session the run's tool printed, for the plan's
// next build to resume; a resumed run that failed forgets it, so the next
// build starts afresh rather than failing the same way.
func (d *Driver) keepSession(r *running, o Outcome) {
	if d.Resume == nil || r.job.Mode == proc.ModeReview {
		return
	}
	slug := model.SlugOf(path.Base(r.job.Rel))
	if id := r.result.Result().Session; look.ValidSession(id) && o.Code == 0 {
		s := look.Session{Endpoint: d.Endpoint, ID: id, Agent: d.Worker.AgentID, At: time.Now().UTC()}
		if err := look.SaveSession(d.Tree.Project, slug, s); err != nil {
			d.Log.Printf("could not record session %s: %v", id, err)
		}
		return
	}
	if r.resumed {
		look.DropSession(d.Tree.Project, slug)
	}
}

// jobPlaceholders adds what job brings to the placeholders: its mode, the
// coordinator's files, its port block. The state file says which turn runs.
func (d *Driver) jobPlaceholders(job Job, ph *proc.Placeholders) {
	ph.Mode = cmp.Or(job.Mode, proc.ModeBuild)
	ph.Proposal, ph.ApprovedPlan, ph.Feedback = job.Proposal, job.ApprovedPlan, job.Feedback
	if len(job.Ports) > 0 {
		ph.Ports = append([]int(nil), job.Ports...)
	}
	if ph.Project == "" {
		ph.Project = filepath.Base(d.Tree.Project)
	}
	d.state.Mode = ph.Mode
}

// planTurnDone handles a plan turn's exit 0: the proposal's authorship is
// recorded beside it and the lease is handed to the inbox. No proposal (or
// one that cannot be recorded) gives the plan back, saying why.
func (d *Driver) planTurnDone(r *running, o Outcome) Outcome {
	job := r.job
	slug := model.SlugOf(path.Base(job.Rel))
	if err := d.handInProposal(r); err != nil {
		reason := "the plan turn's proposal cannot be handed in: " + tree.ErrText(err)
		d.Log.Printf("%s", reason)
		return d.giveBack(job.Rel, r.me, reason, Outcome{Code: -1, Note: reason})
	}
	if _, err := os.Lstat(job.Proposal); errors.Is(err, fs.ErrNotExist) {
		reason := "the plan turn wrote no proposal"
		d.Log.Printf("%s (expected %s)", reason, job.Proposal)
		return d.giveBack(job.Rel, r.me, reason, Outcome{Code: -1, Note: reason})
	}
	// Empty, oversized, a symlink: RecordProposal refuses it, naming why.
	rec, err := coord.RecordProposal(d.Tree.Project, coord.Record{
		Slug: slug, N: job.ProposalN, Plan: job.Rel, AgentID: d.Worker.AgentID, RunID: job.RunID,
	})
	if err != nil {
		reason := "the plan turn's proposal cannot be recorded: " + tree.ErrText(err)
		d.Log.Printf("%s", reason)
		return d.giveBack(job.Rel, r.me, reason, Outcome{Code: -1, Note: reason})
	}
	d.Log.Printf("proposal %d recorded: sha256 %s, run %s", rec.N, rec.SHA256, rec.RunID)
	if err := d.Tree.AwaitApproval(job.Rel, r.me); err != nil {
		o.Code = -1
		o.Plan = d.whereIs(job.Rel)
		o.Note = "plan turn done, but the plan cannot wait in the inbox: " + tree.ErrText(err)
		d.Log.Printf("%s", o.Note)
		return o
	}
	o.Plan = job.Rel
	o.Note = fmt.Sprintf("proposal %d waits for approval (%s)", rec.N, job.Proposal)
	d.Log.Printf("%s; `fleetwatch approve %s` or `fleetwatch reject %s --note …` decides", o.Note, slug, slug)
	return o
}
