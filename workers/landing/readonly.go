package landing

import (
	"slices"

	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// writable refuses a viewer's tree (planfs.Tree.ReadOnly) before a landing
// verb reads git or changes anything, in one line naming what it would
// have changed: the engine refuses, not only the key map. Every caller is
// a person's verb (approve, queue, land, send back, a peer review), so it
// also refuses a process an agent or a check started, however its
// environment was cleaned.
func writable(t *planfs.Tree, what string) error {
	if err := t.Writable(); err != nil {
		return &planfs.PlanError{Rel: what, Err: err, Detail: err.Error()}
	}
	if why := sandbox.AgentRun(); why != "" {
		return refused("%s: a person's verb, and %s", what, why)
	}
	return nil
}

// ownBranch refuses slug when another plan's slug would produce its branch
// too: approving, queueing or landing feature/<slug> could carry the other
// plan's unreviewed commits.
func ownBranch(t *planfs.Tree, slug string) error {
	snap, err := t.Scan()
	if err != nil {
		return err
	}
	var others []string
	for i := range snap.Plans {
		if p := &snap.Plans[i]; model.SameBranch(slug, p.Slug) {
			others = append(others, p.Rel)
		}
	}
	if len(others) == 0 {
		return nil
	}
	slices.Sort(others)
	return refused("%s: %s", slug, model.BranchShareProblem(model.FeatureBranch(slug), others))
}
