package landing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// Batch landing (`queue: {batch: N}`), step by step, and what a kill -9
// after each leaves:
//
//  1. pick up to N entries in landing order (orderEntries) that can land now:
//     approved, not stale, not already failed on their own candidate, none
//     waiting on a queued plan it depends on. A hotfix rides alone.
//  2. build the chain: each entry merged onto the one before, starting at
//     the integration tip (batch:built). Each link is the very commit
//     landing that entry alone on the link before would build, so the
//     batch's tree is the tree of landing them one by one, and a rerun
//     builds the same chain again.
//  3. check the chain's last commit, the batch's candidate (batch:checked).
//     A failure is retried once as is (RetryChecks: the failed attempt is
//     kept beside the result as .retry.json, so a rerun knows it was
//     retried and a pass on the retry reads as flaky). Meanwhile the
//     prefixes of the chain are checked for the bisection.
//  4. bisection: the chain's prefixes are checked, several at once, until
//     the first failing one is next to a passing one (or to the tip): that
//     entry is the culprit. Every result is stored by tree, so a rerun
//     after a kill finds what was learnt and goes on where it stopped.
//  5. CAS the integration branch to the longest passing prefix, the whole
//     chain when it passed (batch:cas): one swap, to a commit whose exact
//     tree passed every check. From here each entry in it is found landed
//     by interrupted() (its approved commit behind the queue's own merge),
//     so a rerun only finishes them.
//  6. finish each entry in chain order as a single landing does.
//
// Failpoints: batch:built, bisect:round (after each round), batch:checked,
// batch:cas.
//
// The culprit is left queued: its own candidate on the new tip is the
// chain's link it was, whose stored failure makes it `failed`, and its
// entry notes that attempt (culpritState) so it stays failed after the
// branch moves on. The entries behind it are picked again, without it, in
// the next round.

// batchRounds bounds the rounds of one Land: each round lands or fails
// at least one entry.
const batchRounds = config.MaxQueueBatch

// landBatches lands batches while a round leaves work of the same landing
// behind (a culprit found, whose batch-mates go on; a cut-short landing
// finished): until a batch lands whole, nothing is left, or an entry needs
// a person. The lock is held.
func landBatches(ctx context.Context, t *planfs.Tree, opt LandOptions) (Landing, error) {
	var out Landing
	moves := 0
	for round := 0; round < batchRounds; round++ {
		l, culprit, again, err := landBatch(ctx, t, opt)
		if errors.Is(err, errMoved) && moves < casTries-1 {
			moves++
			continue
		}
		out.Batch = append(out.Batch, l.Batch...)
		out.Warnings = append(out.Warnings, l.Warnings...)
		if l.Slug != "" {
			out.Slug, out.Commit, out.To, out.Integration = l.Slug, l.Commit, l.To, l.Integration
			if out.From == "" {
				out.From = l.From
			}
		}
		if culprit != "" {
			fmt.Fprintf(opt.Log, "%s failed and stays queued; the rest go on\n", culprit)
			out.Failed = append(out.Failed, culprit)
			logChecksFailed(t, culprit, "its batch's checks failed and bisection found it")
		}
		if err == nil && again {
			continue
		}
		if len(out.Batch) > 0 && (errors.Is(err, ErrEmpty) || errors.Is(err, ErrNotReady)) {
			err = nil // what was landable landed; list says why the rest wait
		}
		return out, err
	}
	return out, nil
}

// errMoved is a batch's CAS lost to a move of the integration branch: the
// next round builds on the new tip.
var errMoved = fmt.Errorf("%w: the integration branch moved %d times while landing a batch; run queue land again", ErrNotReady, casTries)

// landBatch is one round: finish what a killed lander left, pick, build,
// check, bisect, CAS, finish. culprit names the entry found failing; again
// says the round leaves work of this landing for the next.
func landBatch(ctx context.Context, t *planfs.Tree, opt LandOptions) (l Landing, culprit string, again bool, err error) {
	r, entries, err := readForLanding(t, opt)
	if err != nil {
		return Landing{}, "", false, err
	}
	if done := finishCutShort(t, r, entries, opt); len(done) > 0 {
		last := done[len(done)-1]
		return Landing{Slug: last.Slug, Commit: last.Commit, To: last.To, Integration: r.integration, Batch: done}, "", true, nil
	}
	chain, why := pickBatch(t, r, entries, opt)
	if len(chain) == 0 {
		if why != nil {
			return Landing{}, "", false, why
		}
		return Landing{}, "", false, ErrEmpty
	}
	if err := checkoutFits(t.Project, r.integration, r.tip, chain[len(chain)-1].commit); err != nil {
		return Landing{}, "", false, err
	}
	r.cache.save(r.tip) // the listing shows the chain from it
	fmt.Fprintf(opt.Log, "built batch %s: %s with %s\n", short(chain[len(chain)-1].commit), r.integration, slugsOf(chain))
	failpoint("batch:built")
	good, culprit, err := checkBatch(ctx, t, r, chain, opt.Log)
	if err != nil {
		return Landing{}, "", false, err
	}
	if culprit != "" {
		recordCulprit(t, chain[good])
	}
	failpoint("batch:checked")
	if good == 0 {
		return Landing{}, culprit, culprit != "", nil
	}
	l, err = casBatch(t, r, chain[:good], opt)
	return l, culprit, culprit != "", err
}

// readForLanding reads the repository and the queue, noting a move of the
// integration branch outside the queue. What lands is built here, never
// taken from the cache.
func readForLanding(t *planfs.Tree, opt LandOptions) (*repo, []Entry, error) {
	r, err := readRepo(t.Project)
	if err != nil {
		return nil, nil, err
	}
	entries, err := readQueue(t.Project)
	if err != nil {
		return nil, nil, err
	}
	if why := r.noticeMove(t); why != "" {
		fmt.Fprintf(opt.Log, "warning: %s\n", why)
	}
	_ = recordBaseline(t.Project, r.integration, r.tip)
	r.cache.noReads = true
	return r, entries, nil
}

// finishCutShort finishes every queued landing killed after its swap, in
// queue order: a batch's entries all went in with one swap, so the swap is
// recorded and the checkout of the integration branch brought along once,
// from before the earliest of them.
func finishCutShort(t *planfs.Tree, r *repo, entries []Entry, opt LandOptions) []Landing {
	var done []Landing
	from := ""
	merged, known := r.mergedBranches()
	for _, e := range entries {
		l, ok := cutShortOf(t, r, e.Slug, merged, known)
		if !ok {
			continue
		}
		fmt.Fprintf(opt.Log, "%s at %s is already in %s: finishing its landing\n", e.Slug, short(l.Commit), r.integration)
		recordCutShort(t.Project, r.integration, l)
		_, f := queueMerge(t.Project, e.Slug, l.Commit, r.tip)
		from = earlierFrom(t.Project, from, f)
		done = append(done, finishWarned(t, r, opt, l))
	}
	// The swap of a batch killed before it could record it.
	recordCutShort(t.Project, r.integration, Landing{From: from, To: r.tip})
	if from != "" && revParse(t.Project, "refs/heads/"+r.integration) == r.tip {
		if w := syncCheckout(t.Project, r.integration, from, r.tip); w != "" && len(done) > 0 {
			done[0].Warnings = append(done[0].Warnings, w)
		}
	}
	return done
}

// cutShortOf is slug's landing killed after its swap, if any; only a
// plan whose tip or approved commit is in integration is asked.
func cutShortOf(t *planfs.Tree, r *repo, slug string, merged map[string]bool, known bool) (Landing, bool) {
	if known && !merged[model.FeatureBranch(slug)] && !movedSinceApproval(t, r, slug) {
		return Landing{}, false // neither its tip nor its approved commit is in integration
	}
	return r.interrupted(t, slug)
}

// earlierFrom is the earlier of from and f (either may be ""): where the
// checkout is brought along from.
func earlierFrom(project, from, f string) string {
	if f != "" && (from == "" || isAncestorOK(project, f, from)) {
		return f
	}
	return from
}

// finishWarned finishes l's landing; an error becomes a warning of it.
func finishWarned(t *planfs.Tree, r *repo, opt LandOptions, l Landing) Landing {
	l.From = ""
	l, err := finish(t, r, opt, l)
	if err != nil {
		l.Warnings = append(l.Warnings, err.Error())
	}
	return l
}

// mergedBranches are the feature branches whose tip is in the integration
// branch, from one git call; known is false when git could not say.
func (r *repo) mergedBranches() (map[string]bool, bool) {
	out, err := git(r.project, "for-each-ref", "--merged="+r.tip, "--format=%(refname)", "refs/heads/feature/", "refs/heads/feat/")
	if err != nil {
		return nil, false
	}
	merged := map[string]bool{}
	for _, ref := range strings.Fields(out) {
		merged[strings.TrimPrefix(ref, "refs/heads/")] = true
	}
	return merged, true
}

// movedSinceApproval says slug's approved commit is not its branch's tip:
// only then can the approved commit be in integration while the tip is not.
func movedSinceApproval(t *planfs.Tree, r *repo, slug string) bool {
	a, err := t.ReadApproval(slug)
	return err == nil && a != nil && a.Commit != r.tips[model.FeatureBranch(slug)]
}

func isAncestorOK(project, a, b string) bool {
	in, err := isAncestor(project, a, b)
	return err == nil && in
}

// pickBatch builds the chain of up to QueueBatch entries that can land
// now, in landing order; why is the first entry's reason when none can.
func pickBatch(t *planfs.Tree, r *repo, entries []Entry, opt LandOptions) ([]link, error) {
	var chain []link
	var why error
	held := map[string]bool{} // queued and not riding: what depends on it waits
	onto := r.tip
	for i, e := range orderEntries(t, entries, r.settings.QueueMaxWait, t.Now()) {
		if len(chain) == max(1, r.settings.QueueBatch) || (e.Hotfix && len(chain) > 0) {
			break
		}
		if !inReview(t, e.Slug) {
			continue
		}
		st := r.status(t, e.Slug, reviewRel(e.Slug), i+1)
		r.culpritState(e, &st)
		err := notReady(r, e.Slug, st, opt.Ungated)
		if err == nil && st.State == Failed {
			err = fmt.Errorf("%w: %s: %s", ErrNotReady, e.Slug, st.Why)
		}
		if err == nil {
			err = waitsOn(t, e.Slug, held)
		}
		var l link
		if err == nil {
			l, err = chainLink(t, r, onto, e.Slug, st.Commit)
		}
		if err != nil {
			held[e.Slug] = true
			if why == nil {
				why = err
			}
			continue
		}
		chain = append(chain, l)
		onto = l.commit
		if e.Hotfix {
			break
		}
	}
	return chain, why
}

// chainLink merges tip onto onto as landing slug alone there would.
func chainLink(t *planfs.Tree, r *repo, onto, slug, tip string) (link, error) {
	d, err := r.cache.get(onto, tip)
	if err != nil {
		return link{}, err
	}
	if d.Tree == "" {
		return link{}, fmt.Errorf("%w: %s conflicts with the batch ahead of it in %s", ErrNotReady, slug, strings.Join(d.Conflicts, ", "))
	}
	commit, err := buildCommit(r.project, onto, tip, d.Tree, slug, planTitle(t, reviewRel(slug), slug))
	if err != nil {
		return link{}, err
	}
	r.cache.built(onto, tip, commit)
	return link{slug: slug, tip: tip, commit: commit, tree: d.Tree}, nil
}

func slugsOf(chain []link) string {
	s := make([]string, len(chain))
	for i, l := range chain {
		s[i] = l.slug
	}
	return strings.Join(s, ", ")
}

// checkBatch checks the chain's last commit, retries it once as is, and
// bisects the chain's prefixes meanwhile; good is how many links (from the
// first) may land, culprit the entry found failing ("" when all pass).
func checkBatch(ctx context.Context, t *planfs.Tree, r *repo, chain []link, log io.Writer) (int, string, error) {
	if len(r.settings.Checks) == 0 {
		return len(chain), "", nil
	}
	checks := r.settings.Checks
	last := chain[len(chain)-1]
	fmt.Fprintf(log, "checking batch %s (%d changes)\n", short(last.commit), len(chain))
	res, err := RunChecks(ctx, t.Project, checks, last.commit, log)
	if err != nil {
		return 0, "", err
	}
	if allPass(res) {
		return len(chain), "", nil
	}
	bctx, stop := context.WithCancel(ctx)
	defer stop()
	log = &lockedWriter{w: log} // the retry and the bisection both report
	retried := make(chan bool, 1)
	go func() {
		fmt.Fprintf(log, "batch %s failed; retrying it once as is\n", short(last.commit))
		res, err := RetryChecks(bctx, t.Project, checks, last.commit, log)
		pass := err == nil && allPass(res)
		if pass {
			stop() // the bisection is moot
		}
		retried <- pass
	}()
	good, err := bisect(bctx, t, r, chain, log)
	if <-retried {
		fmt.Fprintf(log, "batch %s passed on its retry: flaky\n", short(last.commit))
		return len(chain), "", nil
	}
	if err != nil {
		return 0, "", err
	}
	return good, chain[good].slug, nil
}

// casBatch swaps the integration branch to the chain's last commit and
// finishes each entry in it, in order.
func casBatch(t *planfs.Tree, r *repo, chain []link, opt LandOptions) (Landing, error) {
	to := chain[len(chain)-1].commit
	moved, err := casThrough(t, r, chain, to, opt)
	if err != nil {
		return Landing{}, err
	}
	if moved {
		fmt.Fprintf(opt.Log, "the integration branch moved; building the batch again\n")
		return Landing{}, errMoved
	}
	failpoint("batch:cas")
	var warnings []string
	if err := recordSet(t.Project, r.integration, to); err != nil {
		warnings = append(warnings, "could not record where the queue left "+r.integration+": "+err.Error())
	}
	fmt.Fprintf(opt.Log, "%s: %s → %s (%s)\n", r.integration, short(r.tip), short(to), slugsOf(chain))
	out := Landing{Integration: r.integration, From: r.tip, To: to, Warnings: warnings}
	for i, l := range chain {
		one := Landing{Slug: l.slug, Commit: l.tip, To: to}
		if i == 0 {
			one.From = r.tip // the checkout is brought along once
		}
		one, err := finish(t, r, opt, one)
		if err != nil {
			return out, err
		}
		one.From = r.tip
		out.Slug, out.Commit = one.Slug, one.Commit
		out.Batch = append(out.Batch, one)
	}
	return out, nil
}

// recordCulprit notes on l's queue entry that a bisection found it
// failing on l's tree.
func recordCulprit(t *planfs.Tree, l link) {
	_ = editQueue(t.Project, func(entries []Entry) ([]Entry, error) {
		if i := position(entries, l.slug); i >= 0 {
			entries[i].Bisected = &Attempt{Commit: l.tip, Tree: l.tree}
		}
		return entries, nil
	})
}

// culpritState makes a queued entry not yet checked on today's tip failed
// when a bisection found it failing at its commit and the stored result on
// that tree says so still.
func (r *repo) culpritState(e Entry, st *Status) {
	b := e.Bisected
	if b == nil || st.State != Queued || b.Commit != st.Commit || !treeID.MatchString(b.Tree) {
		return
	}
	res := CachedChecks(r.project, r.settings.Checks, b.Tree)
	if !failedChecks(res) {
		return
	}
	_, why := decide(facts{Queued: true, Approval: st.Approval, Checks: res})
	st.State, st.Why = Failed, "failed in a batch (tree "+short(b.Tree)+"): "+why+"; queue remove and add it to try again"
}

// lockedWriter lets goroutines share one progress writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
