package model

import (
	"fmt"
	"slices"
	"strings"
)

// Two plans never share a branch. FeatureBranch folds every byte outside
// [A-Za-z0-9._/-] to `-`, so `a+b` and `a-b` both work on feature/a-b:
// landing one would land the other's unreviewed commits. From the tree
// alone nobody can tell whose commits a shared branch already holds (the
// plan that "should" keep it may be the second to have claimed it), so the
// rule refuses both until one is renamed, rather than pick a keeper that
// could inherit the other's work. Plans in every lane count, completed/
// too: fleetwatch never deletes a branch, so a finished plan's branch stays
// its own. Plans with the same slug (any case) are duplicates, not sharers:
// `check` reports them on their own and a claim's move refuses the second.

// branchKey is what two plans' branches collide on: git keeps loose refs as
// files, so on a case-insensitive file system feature/A-b is feature/a-b.
func branchKey(slug string) string { return strings.ToLower(FeatureBranch(slug)) }

// SameBranch reports whether plans named a and b, different slugs, would
// work on one branch.
func SameBranch(a, b string) bool {
	return !strings.EqualFold(a, b) && branchKey(a) == branchKey(b)
}

// SharedBranches indexes the plans of s whose branch another plan's slug
// also produces: each such plan's rel to the rels of the others, sorted.
// Plans whose branch is their own are absent. Cost: one FeatureBranch per
// plan and a map, no sorting unless a branch is shared.
type SharedBranches map[string][]string

// BranchSharers builds the index for s.
func BranchSharers(s *Snapshot) SharedBranches {
	byKey := make(map[string][]int, len(s.Plans))
	for i := range s.Plans {
		k := branchKey(s.Plans[i].Slug)
		byKey[k] = append(byKey[k], i)
	}
	var out SharedBranches
	for _, idx := range byKey {
		if len(idx) < 2 {
			continue
		}
		for _, i := range idx {
			var others []string
			for _, j := range idx {
				if SameBranch(s.Plans[i].Slug, s.Plans[j].Slug) {
					others = append(others, s.Plans[j].Rel)
				}
			}
			if len(others) == 0 {
				continue
			}
			slices.Sort(others)
			if out == nil {
				out = SharedBranches{}
			}
			out[s.Plans[i].Rel] = others
		}
	}
	return out
}

// Why says why p cannot be claimed because of a shared branch, "" when its
// branch is its own.
func (sh SharedBranches) Why(p *Plan) string {
	others := sh[p.Rel]
	if len(others) == 0 {
		return ""
	}
	return BranchShareProblem(FeatureBranch(p.Slug), others)
}

// BranchShareProblem is the one-line reason shared by every face: the
// branch and the plans that would also use it.
func BranchShareProblem(branch string, others []string) string {
	return fmt.Sprintf("its branch %s is also %s's (two plans never share a branch); rename one", branch, strings.Join(others, ", "))
}

// problem is ClaimProblem, else a ready plan's BlankProblem, else what the
// claims backend of s refuses, else the shared branch, else what refuse
// says: everything that stops every claim of p.
func (sh SharedBranches) problem(s *Snapshot, p *Plan, needBranch bool, refuse func(*Plan) string) string {
	if why := ClaimProblem(p, needBranch); why != "" {
		return why
	}
	if _, why := p.Header.BlankProblem(); why != "" && p.Lane.Ready() {
		return why
	}
	if s.RefNamed {
		if why := LeaseRefProblem(p.Slug); why != "" {
			return why
		}
	}
	if why := s.Refused[p.Slug]; why != "" {
		return why
	}
	if why := sh.Why(p); why != "" || refuse == nil {
		return why
	}
	return refuse(p)
}
