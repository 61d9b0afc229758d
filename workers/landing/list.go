package landing

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/coord"
)

// List reads every candidate and queue entry of project now.
func List(project string) (Listing, error) {
	t, err := planfs.Open(project)
	if err != nil {
		return Listing{}, err
	}
	return ListTree(t)
}

// ListTree is List on an open tree.
func ListTree(t *planfs.Tree) (Listing, error) {
	r, err := readRepo(t.Project)
	if err != nil {
		return Listing{}, err
	}
	entries, err := readQueue(t.Project)
	if err != nil {
		return Listing{}, err
	}
	snap, err := t.Scan()
	if err != nil {
		return Listing{}, err
	}
	inReview, slugs := reviewPlans(snap)
	out := r.listingHead(t)
	queued := map[string]bool{}
	for i, e := range orderEntries(t, entries, r.settings.QueueMaxWait, t.Now()) {
		if queued[e.Slug] {
			continue
		}
		queued[e.Slug] = true
		st := r.status(t, e.Slug, inReview[e.Slug], i+1)
		r.culpritState(e, &st)
		out.Items = append(out.Items, st)
	}
	for _, slug := range slugs {
		if !queued[slug] {
			out.Items = append(out.Items, r.status(t, slug, inReview[slug], 0))
		}
	}
	out.Batch = batchView(t, r, out.Items)
	r.cache.save(r.tip)
	return out, nil
}

// statusOf reads one slug now, with the repository read for it.
func statusOf(t *planfs.Tree, slug string) (Status, *repo, error) {
	r, err := readRepo(t.Project)
	if err != nil {
		return Status{}, nil, err
	}
	entries, err := readQueue(t.Project)
	if err != nil {
		return Status{}, nil, err
	}
	rel := ""
	if inReview(t, slug) {
		rel = reviewRel(slug)
	}
	st := r.status(t, slug, rel, position(entries, slug)+1)
	r.cache.save(r.tip)
	return st, r, nil
}

// reviewPlans are the shared plans in review-needed/, their rels by slug
// and their slugs in order.
func reviewPlans(snap *model.Snapshot) (map[string]string, []string) {
	inReview := map[string]string{}
	var slugs []string
	for _, p := range snap.Plans {
		if p.Lane == model.ReviewNeeded && !p.Local {
			inReview[p.Slug] = p.Rel
			slugs = append(slugs, p.Slug)
		}
	}
	sort.Strings(slugs)
	return inReview, slugs
}

// listingHead is a listing without its items: the integration branch and
// its tip, what moved it, the checks' names.
func (r *repo) listingHead(t *planfs.Tree) Listing {
	out := Listing{Integration: r.integration, Tip: r.tip, Items: []Status{}, CheckNames: []string{}, Notices: []string{}}
	if r.drift != "" {
		out.Notices = append(out.Notices, r.drift)
	}
	if why := r.noticeMove(t); why != "" {
		out.Notices = append(out.Notices, why)
		out.MovedTo = r.tip
	}
	for _, c := range r.settings.Checks {
		out.CheckNames = append(out.CheckNames, c.Name)
	}
	return out
}

// status derives slug's state against the integration tip; pos is its
// 1-based queue place, 0 when not queued.
func (r *repo) status(t *planfs.Tree, slug, rel string, pos int) Status {
	st := Status{Slug: slug, Rel: rel, Branch: model.FeatureBranch(slug), Author: r.author(t, slug),
		Reviews: []Review{}, Checks: []CheckResult{}, ConflictPaths: []string{}, ScopeViolations: []string{}}
	if pos > 0 {
		st.Position = &pos
	}
	st.Commit = r.tips[st.Branch]
	if r.settings.Forge.On() {
		st.PR, _ = ReadPR(t.Project, slug)
	}
	f := facts{Queued: pos > 0, Ungated: len(r.settings.Checks) == 0, NoBranch: st.Commit == ""}
	st.Ungated = f.Ungated
	if st.Commit != "" && !r.branchFacts(t, &st, &f, slug, rel) {
		return st
	}
	if st.Commit != "" && !f.Landed {
		r.reviewFacts(t, &st, &f, slug)
	}
	f.Checks = st.Checks
	// Only an entry that no longer looks landable is asked whether its
	// landing was cut short: a warm listing stays free of git calls.
	if pos > 0 && !f.Landed && !looksLandable(st) {
		if l, ok := r.interrupted(t, slug); ok {
			f.Unfinished = unfinished(t, r, l)
		}
	}
	st.State, st.Why = decide(f)
	if rel == "" && st.State != Landed {
		st.Why = joinWhy("the plan left review-needed/; the next queue change drops it", st.Why)
	}
	return st
}

// branchFacts fills in what the branch's diff against the integration tip
// says; false, with st settled, when it cannot be read.
func (r *repo) branchFacts(t *planfs.Tree, st *Status, f *facts, slug, rel string) bool {
	d, err := r.cache.get(r.tip, st.Commit)
	if err != nil {
		st.State, st.Why = NeedsReview, err.Error()
		return false
	}
	st.Base, st.Ahead, st.Behind, st.Tree = d.Base, d.Ahead, d.Behind, d.Tree
	if len(d.Conflicts) > 0 {
		st.ConflictPaths = d.Conflicts
	}
	f.Conflicts = d.Conflicts
	f.Landed = r.landed[slug] != "" && d.Ahead == 0
	f.NotAhead = d.Ahead == 0
	st.ScopeViolations = scopeViolations(t, slug, rel, d.Touched)
	return true
}

// reviewFacts fills in an unlanded branch's approval, reviews and checks.
func (r *repo) reviewFacts(t *planfs.Tree, st *Status, f *facts, slug string) {
	st.Approval, st.Reviews = r.reviewsOf(t, slug, st.Commit)
	if st.Approval != nil && !st.Approval.Stale {
		st.ApprovedBy = st.Approval.By
	}
	f.Approval, f.Reviews = st.Approval, st.Reviews
	// Checks of a branch with no commit of its own would be the
	// integration branch's: none are shown.
	if st.Tree != "" && !f.Ungated && !f.NotAhead {
		st.Checks = CachedChecks(r.project, r.settings.Checks, st.Tree)
	}
}

// looksLandable reports whether st has a branch ahead of integration with
// a fresh approval.
func looksLandable(st Status) bool {
	return st.Commit != "" && st.Ahead != 0 && st.Approval != nil && !st.Approval.Stale
}

// reviewsOf is slug's approval and peer reviews, each stale unless it is
// of tip or landing tip gives exactly the tree landing its commit would
// (SameLanding).
func (r *repo) reviewsOf(t *planfs.Tree, slug, tip string) (*Approval, []Review) {
	holds := func(commit string) bool {
		if commit == tip {
			return true
		}
		same, err := SameLanding(r.project, r.tip, commit, tip)
		return err == nil && same
	}
	var ap *Approval
	if a, err := t.ReadApproval(slug); err == nil && a != nil {
		ap = &Approval{Commit: a.Commit, By: a.By, At: a.At, Stale: !holds(a.Commit)}
	}
	reviews := []Review{}
	if files, err := t.ReadReviews(slug); err == nil {
		for _, f := range files {
			reviews = append(reviews, Review{Commit: f.Commit, Reviewer: f.Reviewer, Endpoint: f.Endpoint,
				Verdict: f.Verdict, At: f.At, Path: f.Path, Stale: !holds(f.Commit)})
		}
	}
	return ap, reviews
}

// unfinished says what a landing killed after its swap left to do.
func unfinished(t *planfs.Tree, r *repo, l Landing) string {
	var left []string
	if inReview(t, l.Slug) {
		left = append(left, "the plan is still in review-needed/")
	}
	if r.landed[l.Slug] != l.Commit {
		left = append(left, "refs/fleetwatch/landed/"+l.Slug+" is not pinned")
	}
	left = append(left, "it is still queued")
	return fmt.Sprintf("%s at %s is in %s (merge %s) but its landing was cut short: %s; queue land finishes it",
		l.Slug, short(l.Commit), r.integration, short(l.To), strings.Join(left, ", "))
}

func joinWhy(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

// author is slug's author, from one read of the event log for the whole
// listing (planfs Tree.Authors).
func (r *repo) author(t *planfs.Tree, slug string) string {
	r.authorsOnce.Do(func() { r.authors = t.Authors() })
	return r.authors[slug]
}

// scopeViolations are the paths of touched outside the scope its build
// had (the `## Files in scope` of the approved plan of a plan-first plan,
// else of the plan at rel, beside its Allowed generated files), and any
// under .plans/; none when the plan is gone.
func scopeViolations(t *planfs.Tree, slug, rel string, touched []string) []string {
	if rel == "" || len(touched) == 0 {
		return []string{}
	}
	text, _, err := t.ReadPlan(rel)
	if err != nil {
		return []string{}
	}
	scopeText := text
	if approved, err := coord.ApprovedText(t.Project, slug); err == nil && approved != "" {
		scopeText = approved
	}
	var sc *model.Scope
	if s, found, _ := model.ParseScope(scopeText); found {
		sc = &model.Scope{Patterns: s.Patterns, Allowed: model.ParseHeader(text).AllowedGenerated}
	}
	return append([]string{}, sc.Violations(touched)...)
}
