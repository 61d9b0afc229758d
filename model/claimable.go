package model

import (
	"fmt"
	"strings"

	"github.com/fleetwatch/fleetwatch/internal/refname"
)

// MaxPlanName is the longest plan file name a lease file can be named after:
// `in-progress__<name>.json` must fit in 255 bytes, the usual file name limit.
const MaxPlanName = 255 - len("in-progress__") - len(".json")

// FeatureBranch names the branch for a plan slug: `feature/<slug>`, keeping
// a `feature/` or `feat/` prefix that is already there. Bytes outside
// [A-Za-z0-9._/-] become `-`; the result may still be a name git refuses
// (see CheckBranch).
func FeatureBranch(slug string) string {
	b := []byte(slug)
	for i, c := range b {
		if !branchByte(c) {
			b[i] = '-'
		}
	}
	s := strings.Trim(string(b), "/")
	if s == "" {
		s = "work"
	}
	if strings.HasPrefix(s, "feature/") || strings.HasPrefix(s, "feat/") {
		return s
	}
	return "feature/" + s
}

// branchByte reports whether a feature branch keeps byte c of a slug:
// [A-Za-z0-9._/-].
func branchByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._/-", c) >= 0
}

// BranchRef is branch's full ref name, refs/heads/<branch>: what fleetwatch
// hands git wherever it names a branch, so that a tag or another ref with
// the same short name (a tag `dev`) can never stand in for it.
func BranchRef(branch string) string { return "refs/heads/" + branch }

// FeatureRef is the full ref of slug's feature branch.
func FeatureRef(slug string) string { return BranchRef(FeatureBranch(slug)) }

// CheckBranch applies git's check-ref-format rules to a branch name, so a
// face can say a branch will be refused without running git. It returns ""
// when git would take the name, else why not.
func CheckBranch(name string) string { return refname.Problem(name) }

// ClaimProblem says why p can never be claimed, "" when it can: a file name
// too long for its lease file stops every claim; with needBranch (a worker
// that makes the plan's feature branch) so does a branch name git refuses.
// A plan with a problem is skipped, so it never blocks the plans after it.
func ClaimProblem(p *Plan, needBranch bool) string {
	if len(p.Name) > MaxPlanName {
		return fmt.Sprintf("file name is %d bytes, over %d: its lease file name would be too long; rename it", len(p.Name), MaxPlanName)
	}
	if needBranch {
		b := FeatureBranch(p.Slug)
		if why := CheckBranch(b); why != "" {
			return fmt.Sprintf("git refuses its branch name %s (%s); rename it", b, why)
		}
	}
	return ""
}

// LeaseRefProblem says why a plan named slug can never be claimed where
// claims are git refs named after the slug (refs/fleetwatch/leases/<slug>),
// "" when it can: git refuses a space, ?, ~, ^, :, *, [, \\, a control
// byte, "..", "@{", a leading "." and a ".lock" ending in a ref name, and
// unlike its feature branch the lease ref keeps the slug as it is.
func LeaseRefProblem(slug string) string {
	why := CheckBranch("fleetwatch/leases/" + slug)
	if why == "" {
		return ""
	}
	return fmt.Sprintf("git refuses its lease ref name %q (%s); rename it", slug, why)
}
