package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"fleetwatch/internal/config"
	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/workers"
)

// approvedLimit bounds how much of an approved plan is read for its scope:
// as much as of a plan.
const approvedLimit = 64 << 10

// scopeFor fills the scanner's part of job: what the build may touch (the
// `## Files in scope` of the approved plan, else of the plan itself, plus
// the plan's Allowed generated files), whether a violation stops it, and
// the integration branch the change is measured from. A plan turn has no
// scope (only .plans/ is checked); an agent with no worktree runs in the
// project root, where nothing is scanned.
func (w *workOnce) scopeFor(t *planfs.Tree, job *workers.Job) error {
	if job.Worktree == "" {
		return nil
	}
	if job.Mode != workers.ModePlan {
		text, _, err := t.ReadPlan(job.Rel)
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
	stop := w.ep.OnScopeViolation
	if stop == "" {
		s, err := config.Load(t.Project)
		if err != nil {
			return err
		}
		stop = s.OnScopeViolation
	}
	job.StopOnViolation = stop == "stop"
	if wt, ok, err := workers.Lookup(t.Project, w.agent); err == nil && ok && wt.Integration != "" {
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
