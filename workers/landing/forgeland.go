package landing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/forge"
)

// A landing through a forge, step by step (the steps of land.go between
// building the candidate and finishing):
//
//  1. the head's PR must be open and its head the commit fleetwatch last
//     pushed there: a commit pushed to it by anyone else after the approval
//     refuses the landing;
//  2. the candidate (the approved tip merged onto the base's tip) is pushed
//     to the PR's branch, a fast-forward, and each check is posted as a
//     commit status on that exact commit, pending and then its result;
//  3. it lands one of two ways (`land:`): the queue pushes the candidate to
//     the base branch, only while the base is at the tip it was built on,
//     and the forge is told the PR is merged by it; or the forge merges the
//     PR through its API, pinned to the candidate (refused when the head
//     moved), after which the base's tree must be the checked tree.

// forgeLanding is the forge's part of one landing.
type forgeLanding struct {
	f      forge.Forge
	slug   string
	number int
	base   string
	mode   string // config.LandQueue or config.LandForge
	// queue: the base takes merges only through the forge's merge queue
	// (or merge train), which lands the PR itself.
	queue bool
	cand  string
}

// forgeBegin does steps 1 and 2; nil without a forge.
func forgeBegin(ctx context.Context, t *planfs.Tree, r *repo, slug string, st Status, cand string, log io.Writer) (*forgeLanding, error) {
	f, err := forgeOf(r.settings)
	if err != nil || f == nil {
		return nil, err
	}
	rec, head, err := landablePR(ctx, t, f, slug)
	if err != nil {
		return nil, err
	}
	fl := &forgeLanding{f: f, slug: slug, number: rec.Number, base: r.integration, cand: cand}
	if fl.mode, fl.queue, err = landMode(ctx, f, r.settings.Forge, r.integration); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "pushing %s to PR #%d (%s)\n", short(cand), rec.Number, rec.Branch)
	if err := fl.pushCandidate(ctx, t.Project, st.Commit, head); err != nil {
		return nil, err
	}
	if !st.Ungated {
		fl.post(ctx, pendingChecks(r.settings.Checks), log)
	}
	return fl, nil
}

// landablePR is slug's PR record (opening the PR when it has none) and
// the PR's head on the forge, which must be what fleetwatch pushed.
func landablePR(ctx context.Context, t *planfs.Tree, f forge.Forge, slug string) (*PR, string, error) {
	rec, err := ReadPR(t.Project, slug)
	if err == nil && (rec == nil || rec.Number == 0) {
		rec, err = Publish(ctx, t, slug)
	}
	if err != nil {
		return nil, "", err
	}
	got, err := f.Get(ctx, rec.Number)
	if err != nil {
		return nil, "", fmt.Errorf("%w: PR #%d of %s: %v", ErrNotReady, rec.Number, slug, err)
	}
	return rec, got.HeadSHA, prLandable(slug, *rec, got)
}

// pushCandidate puts the candidate on the PR's branch, only while it is
// at head, and records it as pushed for tip.
func (fl *forgeLanding) pushCandidate(ctx context.Context, project, tip, head string) error {
	_, err := editPR(project, fl.slug, func(pr *PR) error {
		if err := forgePush(ctx, fl.f, project, fl.cand, pr.Branch, head); err != nil {
			pr.Trouble = err.Error()
			return fmt.Errorf("%w: %v", ErrNotReady, err)
		}
		pr.Tip, pr.Pushed, pr.Head, pr.Trouble = tip, fl.cand, fl.cand, ""
		return nil
	})
	return err
}

// prLandable refuses a PR closed or merged on the forge, or whose head is
// not what fleetwatch pushed there.
func prLandable(slug string, rec PR, got forge.PR) error {
	switch {
	case got.State == forge.StateClosed:
		return refused("PR #%d of %s was closed on the forge: reopen it there, or queue send-back %s", got.Number, slug, slug)
	case got.State == forge.StateMerged:
		return refused("PR #%d of %s was merged on the forge by hand: fleetwatch queue sync takes that in", got.Number, slug)
	case got.HeadSHA != rec.Pushed:
		return fmt.Errorf("%w: PR #%d of %s is at %s on the forge, not at %s as fleetwatch pushed it: a commit came after the approval; review it again",
			ErrNotReady, got.Number, slug, short(got.HeadSHA), short(rec.Pushed))
	}
	return nil
}

// landMode is who lands: as `land:` says, or for auto the queue when the
// token may push to base and the forge when it may not.
func landMode(ctx context.Context, f forge.Forge, s config.Forge, base string) (mode string, queue bool, err error) {
	if s.Land == config.LandQueue {
		return s.Land, false, nil
	}
	p, err := f.Protection(ctx, base)
	if err != nil {
		return "", false, fmt.Errorf("%w: could not read %s's protection on the forge: %v", ErrNotReady, base, err)
	}
	if p.PushAllowed && !p.MergeQueue && s.Land != config.LandForge {
		return config.LandQueue, false, nil
	}
	return config.LandForge, p.MergeQueue, nil
}

func pendingChecks(checks []config.Check) []CheckResult {
	out := make([]CheckResult, len(checks))
	for i, c := range checks {
		out[i] = CheckResult{Name: c.Name, Result: Running}
	}
	return out
}

// post puts each check's result on the candidate as a commit status; a
// status that does not go is a line in the log, never a refusal.
func (fl *forgeLanding) post(ctx context.Context, results []CheckResult, log io.Writer) {
	for _, c := range results {
		s := forge.Status{Context: "fleetwatch/" + c.Name, State: statusState(c.Result), Description: statusText(c)}
		if err := fl.f.SetStatus(ctx, fl.cand, s); err != nil {
			fmt.Fprintf(log, "warning: the status of %s on %s did not reach the forge: %v\n", c.Name, short(fl.cand), err)
		}
	}
}

func statusState(r Result) string {
	switch r {
	case Pass:
		return forge.StatusSuccess
	case Fail, Timeout:
		return forge.StatusFailure
	case Running, Missing:
		return forge.StatusPending
	}
	return forge.StatusError
}

func statusText(c CheckResult) string {
	switch {
	case c.Result == Running:
		return "checking this exact commit"
	case c.Flaky:
		return "passed on a retry of this exact tree (flaky)"
	case c.Note != "":
		return string(c.Result) + ": " + c.Note
	case c.Took > 0:
		return fmt.Sprintf("%s on this exact tree in %s", c.Result, shortDuration(c.Took))
	}
	return string(c.Result) + " on this exact tree"
}

// swap moves the integration branch from r.tip to cand, or to a commit
// of cand's tree the forge made; moved says it was elsewhere.
func swap(ctx context.Context, project string, r *repo, fl *forgeLanding, cand string, log io.Writer) (string, bool, error) {
	if fl == nil {
		moved, err := cas(project, r, cand, log)
		return cand, moved, err
	}
	return fl.land(ctx, project, r, log)
}

// postChecks posts the checks' results on the candidate's tree; nothing
// without a forge.
func (fl *forgeLanding) postChecks(ctx context.Context, project string, r *repo, tree string, log io.Writer) {
	if fl != nil {
		fl.post(ctx, CachedChecks(project, r.settings.Checks, tree), log)
	}
}

// land does step 3: the base goes from r.tip to a commit whose tree is
// cand's; moved says the base was elsewhere, for landOnce to build again.
func (fl *forgeLanding) land(ctx context.Context, project string, r *repo, log io.Writer) (to string, moved bool, err error) {
	if err := checkoutFits(project, r.integration, r.tip, fl.cand); err != nil {
		return "", false, err
	}
	if fl.mode == config.LandForge {
		return fl.mergeOnForge(ctx, project, r, log)
	}
	moved, err = forgeCAS(ctx, fl.f, project, r, fl.cand, log)
	return fl.cand, moved, err
}

// forgeCAS is cas through the forge: the base on the forge goes from r.tip
// to cand by one push with a lease on r.tip, then the local branch
// follows; moved says the base was elsewhere (and the local branch now
// follows it) for the caller to build again.
func forgeCAS(ctx context.Context, f forge.Forge, project string, r *repo, cand string, log io.Writer) (bool, error) {
	if err := checkoutFits(project, r.integration, r.tip, cand); err != nil {
		return false, err
	}
	fl := &forgeLanding{f: f, base: r.integration, cand: cand}
	fmt.Fprintf(log, "pushing %s to %s on %s\n", short(cand), r.integration, f.Web())
	if err := forgePush(ctx, f, project, cand, r.integration, r.tip); err != nil {
		moved, cerr := fl.catchUp(ctx, project, r, log)
		if moved || cerr != nil {
			return moved, cerr
		}
		return false, fmt.Errorf("%w: %v (a base that only takes merges through the forge wants land: forge in %s)", ErrNotReady, err, config.File)
	}
	return false, swapLocal(project, r, cand)
}

// batchForge says whether batches land (queue: {batch: N}): always without
// a forge; through one, only where the queue's push lands (land: queue,
// or auto on a base the token may push to), with the forge to push to.
func batchForge(ctx context.Context, s config.Settings) (forge.Forge, bool, error) {
	f, err := forgeOf(s)
	if err != nil || f == nil {
		return nil, err == nil, err
	}
	base := cmp.Or(s.Integration, s.Forge.Base)
	mode, _, err := landMode(ctx, f, s.Forge, base)
	return f, err == nil && mode == config.LandQueue, err
}

// casThrough is a batch's swap: cas, or forgeCAS when the batch lands
// through a forge, after which every PR of the chain must still be what
// fleetwatch pushed (a commit pushed to one after its approval stops the
// batch), and the checks go on the batch's commit.
func casThrough(t *planfs.Tree, r *repo, chain []link, to string, opt LandOptions) (bool, error) {
	if opt.forge == nil {
		return cas(t.Project, r, to, opt.Log)
	}
	ctx, cancel := context.WithTimeout(context.Background(), forgeTimeout)
	defer cancel()
	for _, l := range chain {
		if _, _, err := landablePR(ctx, t, opt.forge, l.slug); err != nil {
			return false, err
		}
	}
	moved, err := forgeCAS(ctx, opt.forge, t.Project, r, to, opt.Log)
	if err == nil && !moved {
		tree, _ := TreeOf(t.Project, to)
		fl := &forgeLanding{f: opt.forge, cand: to}
		fl.post(ctx, CachedChecks(t.Project, r.settings.Checks, tree), opt.Log)
	}
	return moved, err
}

// mergeOnForge has the forge merge the PR, pinned to the candidate, and
// takes in the base it leaves only when its tree is the checked one.
func (fl *forgeLanding) mergeOnForge(ctx context.Context, project string, r *repo, log io.Writer) (string, bool, error) {
	far, err := forgeFetch(ctx, fl.f, project, fl.base)
	if err != nil {
		return "", false, err
	}
	if far == "" {
		return "", false, fmt.Errorf("%w: %s has no branch %s: push it there first", ErrNotReady, fl.f.Web(), fl.base)
	}
	if far != r.tip {
		moved, err := fl.catchUp(ctx, project, r, log)
		return "", moved, err
	}
	if fl.queue {
		return "", false, fl.enqueue(ctx, log)
	}
	fmt.Fprintf(log, "merging PR #%d at %s on %s\n", fl.number, short(fl.cand), fl.f.Web())
	if _, err := fl.f.Merge(ctx, fl.number, fl.cand, "fleetwatch queue land: "+fl.slug+" at "+fl.cand+"."); err != nil {
		if errors.Is(err, forge.ErrHeadMoved) {
			return "", false, fmt.Errorf("%w: PR #%d of %s moved on the forge after it was checked: review it again", ErrNotReady, fl.number, fl.slug)
		}
		return "", false, fmt.Errorf("%w: the forge did not merge PR #%d: %v", ErrNotReady, fl.number, err)
	}
	far, err = fl.takeMerged(ctx, project, r)
	return far, false, err
}

// enqueue hands the PR, pinned to the candidate, to the forge's merge
// queue; the landing ends there, and queue sync completes the plan once
// the forge merged it (takeMerge).
func (fl *forgeLanding) enqueue(ctx context.Context, log io.Writer) error {
	fmt.Fprintf(log, "handing PR #%d at %s to the merge queue of %s\n", fl.number, short(fl.cand), fl.f.Web())
	if err := fl.f.Enqueue(ctx, fl.number, fl.cand); err != nil {
		return fmt.Errorf("%w: the forge's merge queue did not take PR #%d: %v", ErrNotReady, fl.number, err)
	}
	return fmt.Errorf("%w: PR #%d waits in the merge queue of %s; queue sync completes %s once it merged", ErrNotReady, fl.number, fl.f.Web(), fl.slug)
}

// takeMerged brings the base the forge's merge left here, only when its
// tree is the checked tree.
func (fl *forgeLanding) takeMerged(ctx context.Context, project string, r *repo) (string, error) {
	far, err := forgeFetch(ctx, fl.f, project, fl.base)
	if err != nil {
		return "", err
	}
	want, _ := TreeOf(project, fl.cand)
	if got, _ := TreeOf(project, far); got == "" || got != want {
		return "", fmt.Errorf("the forge merged PR #%d of %s, but %s is now at %s, whose tree %s is not the checked tree %s: the plan stays in review-needed/; look at %s",
			fl.number, fl.slug, fl.base, short(far), short(got), short(want), fl.f.Web())
	}
	return far, swapLocal(project, r, far)
}

// catchUp follows the forge's base when it is ahead of ours (another
// lander's landing): the local branch moves to it and moved says build
// again. A base that is not ahead is for a person to sort out.
func (fl *forgeLanding) catchUp(ctx context.Context, project string, r *repo, log io.Writer) (bool, error) {
	far, err := forgeFetch(ctx, fl.f, project, fl.base)
	if err != nil || far == "" || far == r.tip {
		return false, err
	}
	if in, err := isAncestor(project, r.tip, far); err != nil || !in {
		return false, fmt.Errorf("%w: %s on %s is at %s, not ahead of ours at %s: merge them, then queue land again", ErrNotReady, fl.base, fl.f.Web(), short(far), short(r.tip))
	}
	fmt.Fprintf(log, "%s moved on the forge to %s; building again\n", fl.base, short(far))
	if err := checkoutFits(project, r.integration, r.tip, far); err != nil {
		return false, err
	}
	if _, err := git(project, "update-ref", "refs/heads/"+r.integration, far, r.tip); err == nil {
		_ = recordSet(project, r.integration, far)
		if w := syncCheckout(project, r.integration, r.tip, far); w != "" {
			fmt.Fprintf(log, "warning: %s\n", w)
		}
	}
	return true, nil
}

// swapLocal moves the local integration branch from r.tip to to.
func swapLocal(project string, r *repo, to string) error {
	if _, err := git(project, "update-ref", "-m", "fleetwatch queue land", "refs/heads/"+r.integration, to, r.tip); err != nil {
		return fmt.Errorf("%s landed on the forge, but the local %s could not follow (%v): git fetch it", short(to), r.integration, err)
	}
	return nil
}

// forgeLanded records in slug's PR record, if it has one, that it merged,
// and tells the forge the PR is merged by to (a no-op where the forge
// merged it, or sees that itself); a warning when it could not.
func forgeLanded(project, slug, to string) string {
	if pr, err := ReadPR(project, slug); err != nil || pr == nil || pr.Number == 0 {
		return ""
	}
	_, _ = editPR(project, slug, func(pr *PR) error {
		pr.State = forge.StateMerged
		return nil
	})
	return onPR(project, slug, "the forge was not told PR #%d is merged", func(ctx context.Context, f forge.Forge, number int) error {
		return f.MarkMerged(ctx, number, to)
	})
}
