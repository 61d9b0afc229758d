package cli

import (
	"path"

	"fleetwatch/internal/config"
	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/workers"
)

// backendFor prepares the worktree's backend (fleetwatch.yaml `worktree:`):
// the agent's port block, .env.fleetwatch and, the first time or for
// another plan, teardown and setup. Without the section, or without a
// worktree, the job keeps the one port it has and nothing is written.
func (w *workOnce) backendFor(t *planfs.Tree, job *workers.Job) error {
	if job.Port > 0 {
		job.Ports = []int{job.Port}
	}
	s, err := config.Load(t.Project)
	if err != nil {
		return err
	}
	if !s.Worktree.Set() || job.Worktree == "" {
		return nil
	}
	ports, err := workers.AssignPorts(t.Project, w.agent, w.ports, max(s.Worktree.Ports, 1))
	if err != nil {
		return err
	}
	slug := model.SlugOf(path.Base(job.Rel))
	b, err := workers.PrepareBackend(t.Project, s.Worktree, w.agent, slug, job.Worktree, ports)
	if err != nil {
		return err
	}
	job.Port, job.Ports, job.Env = ports[0], b.Ports, b.Env
	return nil
}

// refuseFor judges plan names by the project's `worktree: env` templates
// (model.Options.Refuse), so a plan whose name they refuse is skipped by
// the pick instead of failing every claim of every worker. It applies to
// a worker whose claims get a worktree with a backend (--ensure-worktree
// with --run), and to --list --ensure-worktree, which shows what such a
// worker skips. nil otherwise, and when fleetwatch.yaml has no such
// section (or does not parse: the claim says so).
func (w *workOnce) refuseFor(t *planfs.Tree) func(*model.Plan) string {
	if !w.ensureWT || !(w.run || w.list) {
		return nil
	}
	s, err := config.Load(t.Project)
	if err != nil {
		return nil
	}
	judge := workers.BackendRefusal(t.Project, s.Worktree, w.agent)
	if judge == nil {
		return nil
	}
	return func(p *model.Plan) string { return judge(p.Slug) }
}
