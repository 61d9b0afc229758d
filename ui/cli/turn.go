package cli

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"

	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/workers"
	"fleetwatch/workers/coord"
)

// turnFor decides a plan-first plan's turn. A plan is plan first when the
// endpoint says so (plan_first), its header does (`- **Plan first:** yes`),
// or this run resumed it from the inbox (a worker of another endpoint took
// over a gone agent's approved plan). The coordinator's files then decide:
// approved → a build of the approved text; rejected or never decided → a
// plan turn writing the next proposal, with the rejection's note.
func (w *workOnce) turnFor(t *planfs.Tree, job *workers.Job) error {
	planFirst, err := w.planFirst(t, job.Rel)
	if err != nil || !planFirst {
		return err
	}
	slug := model.SlugOf(path.Base(job.Rel))
	turn, err := coord.NextTurn(t.Project, slug)
	if err != nil {
		return fmt.Errorf("plan first: %v", err)
	}
	if w.resumed[job.Rel] && turn.Decision != nil {
		_ = coord.MarkResumed(t.Project, slug) // a note for faces; the lease is what counts
	}
	if !turn.Plan {
		job.ApprovedPlan = turn.ApprovedPlan
		return nil
	}
	job.Mode, job.Proposal, job.ProposalN, job.Feedback = workers.ModePlan, turn.Proposal, turn.N, turn.Feedback
	job.RunID = newRunID()
	if w.ep.PlanCommand != nil {
		argv, err := workers.CheckExecutor(w.ep.PlanCommand, t.Project)
		if err != nil {
			return fmt.Errorf("endpoint %s plan_command: %v", w.ep.Name, err)
		}
		job.Argv = argv
	}
	return nil
}

// planFirst reports whether rel's run starts with a plan turn (or builds
// an approved plan): see turnFor.
func (w *workOnce) planFirst(t *planfs.Tree, rel string) (bool, error) {
	if w.ep.PlanFirst || w.resumed[rel] {
		return true, nil
	}
	text, _, err := t.ReadPlan(rel)
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
