package cli

import (
	"fleetwatch/planfs"
	"fleetwatch/workers"
)

// jobFor is what the driver is handed for a claimed plan: which turn it is
// (plan or build, the coordinator's files), what the build may touch, and
// the worktree's backend. An error gives the plan back with it as the
// reason.
func (w *workOnce) jobFor(t *planfs.Tree, held planfs.Claimed, wt string, port int) (workers.Job, error) {
	job := workers.Job{Rel: held.Rel, Token: held.Token, Worktree: wt, Port: port, Mode: workers.ModeBuild}
	if err := w.turnFor(t, &job); err != nil {
		return job, err
	}
	if err := w.scopeFor(t, &job); err != nil {
		return job, err
	}
	if err := w.backendFor(t, &job); err != nil {
		return job, err
	}
	return job, nil
}

// turnFor decides a plan-first plan's turn (internal/cli/turn.go).
func (w *workOnce) turnFor(t *planfs.Tree, job *workers.Job) error {
	return nil // TODO(plan-first helper): move to turn.go
}

// scopeFor fills the scanner's part of job (internal/cli/scopejob.go).
func (w *workOnce) scopeFor(t *planfs.Tree, job *workers.Job) error {
	return nil // TODO(scope helper): move to scopejob.go
}

// backendFor prepares the worktree's backend (internal/cli/backendjob.go).
func (w *workOnce) backendFor(t *planfs.Tree, job *workers.Job) error {
	return nil // TODO(backend helper): move to backendjob.go
}
