package model

// DepProblem is a proposed dependency that will hold the plan back for
// good: Reason is "unknown" (no plan by that slug in any lane, nor in git's
// completed/) or "cycle" (it leads back to the plan itself).
type DepProblem struct {
	Slug   string
	Reason string
}

// ProposedDeps judges the Depends on slugs proposed for the plan slug
// before they are written: which name no plan and which would close a
// cycle through open plans, as Evaluate would then report it. They are
// warnings: a plan may name one that is still to be written.
func ProposedDeps(s *Snapshot, slug string, deps []string, history History) []DepProblem {
	return NewDepIndex(s).Proposed(slug, deps, history)
}

// Proposed is ProposedDeps on an index built once, for a form that judges
// the list at every key.
func (ix *DepIndex) Proposed(slug string, deps []string, history History) []DepProblem {
	self := DepKey(slug)
	var out []DepProblem
	for _, d := range dedupFold(normalizeDeps(deps)) {
		k := DepKey(d)
		_, open := ix.open[k]
		switch {
		case k == self || open && ix.leadsTo(k, self):
			out = append(out, DepProblem{Slug: d, Reason: "cycle"})
		case !open && !ix.completed[k] && (history == nil || !history(d)):
			out = append(out, DepProblem{Slug: d, Reason: "unknown"})
		}
	}
	return out
}

// leadsTo reports whether the open plans keyed from depend, directly or
// through other open plans, on the key target. Iterative, each key once.
func (ix *DepIndex) leadsTo(from, target string) bool {
	seen := map[string]bool{from: true}
	queue := []string{from}
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		for _, i := range ix.byKey[k] {
			for _, d := range ix.plans[i].Header.DependsOn {
				dk := DepKey(d)
				if dk == target {
					return true
				}
				if !seen[dk] {
					seen[dk] = true
					queue = append(queue, dk)
				}
			}
		}
	}
	return false
}

// SlugTaken is the rel of a plan in any lane that answers to slug (as
// `<slug>.md`, `<slug>.local.md` or completed/'s `YYYY-MM-DD-<slug>.md`,
// case folded), or "".
func SlugTaken(s *Snapshot, slug string) string {
	k := DepKey(slug)
	for i := range s.Plans {
		if DepKey(s.Plans[i].Slug) == k {
			return s.Plans[i].Rel
		}
	}
	return ""
}
