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
