package landing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/seat"
)

// Landing the head, step by step, and what a kill -9 after each leaves:
//
//  1. build the candidate commit on the integration tip (land:built):
//     an unreferenced commit; a rerun builds the same one again.
//  2. check it, unless every check passed on its tree (land:checked):
//     results are keyed by tree, so a rerun does not check again.
//  3. compare-and-swap the integration branch to it, on the remote first
//     when it has one (land:cas): from here the frozen tip is an ancestor
//     of integration, and a rerun only finishes the steps below.
//  4. verify that, bring a clean checkout of integration to it, move the
//     plan review-needed/ → completed/ (land:moved), pin
//     refs/fleetwatch/landed/<slug> (land:pinned), dequeue, and only then
//     release the author's worktree.
//
// One lander at a time: a flock in the git common dir, so two operators or
// two checkouts of one repository never land together; a second lander is
// refused at once, naming the first one's pid. The CAS keeps a branch
// moved by anyone else from being overwritten. No branch is ever rewritten
// or deleted.

// ErrEmpty is Land's answer when the queue has nothing to land (exit 1).
var ErrEmpty = errors.New("the queue is empty")

// casTries bounds rebuilding when the integration branch moves under us.
const casTries = 3

// Land lands the queue's head: build, check, CAS, verify, move the plan,
// pin refs/fleetwatch/landed/<slug>, release the worktree.
func Land(ctx context.Context, t *planfs.Tree, opt LandOptions) (Landing, error) {
	if err := writable(t, queueDir); err != nil {
		return Landing{}, err
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	unlock, err := lockLand(t.Project)
	if err != nil {
		return Landing{}, err
	}
	defer unlock()
	// An approval given on the forge counts: its word is read first.
	if said, err := syncForge(ctx, t, syncer{landing: true}); err != nil {
		fmt.Fprintf(opt.Log, "warning: the forge was not read: %v\n", err)
	} else {
		for _, line := range said {
			fmt.Fprintln(opt.Log, line)
		}
	}
	wctx, stopWarm := context.WithCancel(ctx)
	defer stopWarm()
	warm := warmIntegration(wctx, t.Project)
	l, err := landLocked(ctx, t, opt)
	if err != nil {
		stopWarm() // nothing landed: a refusal is not kept waiting on it
	}
	warm()
	afterLanding(t.Project, opt.Log)
	if err != nil && !errors.Is(err, ErrEmpty) && ctx.Err() == nil {
		// For the notices of every face, not only the one that ran it.
		t.LogEvent(planfs.Event{Event: EventLandRefused, Slug: l.Slug, To: l.Commit, AgentID: opt.Actor, Reason: err.Error()})
	}
	return l, err
}

// EventLandRefused is the event Land logs when the queue's head did not
// land (refused or failed; an empty queue is not one).
const EventLandRefused = "land-refused"

func landLocked(ctx context.Context, t *planfs.Tree, opt LandOptions) (Landing, error) {
	if s, err := config.Load(t.Project); err == nil && s.QueueBatch > 1 {
		// Through a forge, batches land by the queue's push only: a forge
		// merges one PR at a time.
		f, batch, err := batchForge(ctx, s)
		if err != nil {
			return Landing{}, err
		}
		if batch {
			opt.forge = f
			return landBatches(ctx, t, opt)
		}
	}
	for try := 1; ; try++ {
		l, moved, err := landOnce(ctx, t, opt)
		if !moved {
			return l, err
		}
		if try == casTries {
			return l, fmt.Errorf("%w: the integration branch moved %d times while landing %s; run queue land again", ErrNotReady, casTries, l.Slug)
		}
		fmt.Fprintf(opt.Log, "the integration branch moved; building %s again\n", l.Slug)
	}
}

// lockLand takes <git common dir>/fleetwatch-land.lock without waiting.
func lockLand(project string) (func(), error) {
	dir, err := commonDir(project)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "fleetwatch-land.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			pid, _ := os.ReadFile(path)
			return nil, refused("another queue land is landing (pid %s, %s); wait for it", strings.TrimSpace(string(pid)), path)
		}
		return nil, err
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, nil
}

// queueHead is the first entry still in review, whose branch is taken as
// its own; the entries before it, gone from review, are dropped from the
// queue. cut is instead a landing killed after its CAS, met on the way,
// for the caller to finish. ErrEmpty when no entry is left.
func queueHead(t *planfs.Tree, r *repo, opt LandOptions, entries []Entry) (head *Entry, cut *Landing, err error) {
	dropped := false
	for i := range entries {
		e := entries[i]
		if l, ok := r.interrupted(t, e.Slug); ok {
			fmt.Fprintf(opt.Log, "%s at %s is already in %s: finishing its landing\n", e.Slug, short(l.Commit), r.integration)
			recordCutShort(t.Project, r.integration, l)
			return nil, &l, nil
		}
		if inReview(t, e.Slug) {
			if err := ownBranch(t, e.Slug); err != nil {
				return nil, nil, err
			}
			head = &e
			break
		}
		fmt.Fprintf(opt.Log, "%s left review-needed/: dropped from the queue\n", e.Slug)
		dropped = true
	}
	if dropped || head == nil {
		_ = dequeue(t, "")
	}
	if head == nil {
		return nil, nil, ErrEmpty
	}
	return head, nil, nil
}

// landOnce is one attempt; moved says the CAS lost and a rebuild may win.
func landOnce(ctx context.Context, t *planfs.Tree, opt LandOptions) (Landing, bool, error) {
	r, entries, err := readForLanding(t, opt)
	if err != nil {
		return Landing{}, false, err
	}
	entries = orderEntries(t, entries, r.settings.QueueMaxWait, t.Now())
	head, cut, err := queueHead(t, r, opt, entries)
	if cut != nil {
		// A landing that was killed after its CAS: finish it.
		l, err := finish(t, r, opt, *cut)
		return l, false, err
	}
	if err != nil {
		return Landing{}, false, err
	}
	st := r.status(t, head.Slug, reviewRel(head.Slug), 1)
	l := Landing{Slug: head.Slug, Commit: st.Commit, From: r.tip}
	if err := notReady(r, head.Slug, st, opt.Ungated); err != nil {
		return l, false, err
	}
	title := planTitle(t, st.Rel, head.Slug)
	cand, err := buildCommit(t.Project, r.tip, st.Commit, st.Tree, head.Slug, title)
	if err != nil {
		return l, false, err
	}
	if err := checkoutFits(t.Project, r.integration, r.tip, cand); err != nil {
		return l, false, err
	}
	fmt.Fprintf(opt.Log, "built %s: %s with %s at %s\n", short(cand), r.integration, head.Slug, short(st.Commit))
	failpoint("land:built")

	fl, err := forgeBegin(ctx, t, r, head.Slug, st, cand, opt.Log)
	if err != nil {
		return l, false, err
	}
	if !st.Ungated {
		// The entries behind head are checked meanwhile, on the chain from
		// cand; their runs are let finish on the way out, for the next
		// landing reuses their results.
		spec := speculate(ctx, t, r, entries, head.Slug, cand, opt.Log)
		defer spec.wait()
		err := checkCandidate(ctx, t, r, head.Slug, st, cand, opt.Log)
		fl.postChecks(ctx, t.Project, r, st.Tree, opt.Log)
		if err != nil {
			spec.cancel()
			return l, false, err
		}
	}
	failpoint("land:checked")

	to, moved, err := swap(ctx, t.Project, r, fl, cand, opt.Log)
	if err != nil || moved {
		return l, moved, err
	}
	failpoint("land:cas")
	l.To = to
	if err := recordSet(t.Project, r.integration, to); err != nil {
		l.Warnings = append(l.Warnings, "could not record where the queue left "+r.integration+": "+err.Error())
	}
	fmt.Fprintf(opt.Log, "%s: %s → %s\n", r.integration, short(r.tip), short(to))
	l, err = finish(t, r, opt, l)
	return l, false, err
}

// notReady is why the queue's head slug, at st, cannot land yet, or nil
// when it can; it is asked before anything is built.
func notReady(r *repo, slug string, st Status, ungatedOK bool) error {
	switch {
	case st.Commit == "":
		return fmt.Errorf("%w: %s has no branch %s; queue send-back %s", ErrNotReady, slug, st.Branch, slug)
	case len(st.ConflictPaths) > 0:
		return fmt.Errorf("%w: %s conflicts with %s in %s; queue send-back %s returns it to its lane", ErrNotReady,
			slug, r.integration, strings.Join(st.ConflictPaths, ", "), slug)
	case st.Approval == nil:
		return fmt.Errorf("%w: %s is not approved (fleetwatch review %s --approve)", ErrNotReady, slug, slug)
	case st.Approval.Stale:
		return fmt.Errorf("%w: %s moved to %s after %s approved %s; review it again", ErrNotReady,
			slug, short(st.Commit), st.Approval.By, short(st.Approval.Commit))
	case st.Ungated && !ungatedOK:
		return fmt.Errorf("%w: %s is %s", ErrNotReady, slug, ungatedWhy)
	}
	return nil
}

// checkCandidate passes when every check passes on cand. Results are keyed
// by tree: when all of them already passed on st.Tree, nothing runs again.
func checkCandidate(ctx context.Context, t *planfs.Tree, r *repo, slug string, st Status, cand string, log io.Writer) error {
	project := t.Project
	results := CachedChecks(project, r.settings.Checks, st.Tree)
	if !allPass(results) {
		fmt.Fprintf(log, "checking %s\n", short(cand))
		var err error
		if results, err = RunChecks(ctx, project, r.settings.Checks, cand, log); err != nil {
			return err
		}
	}
	if !allPass(results) {
		_, why := decide(facts{Queued: true, Approval: st.Approval, Checks: results})
		logChecksFailed(t, slug, why)
		return fmt.Errorf("%w: %s: %s", ErrNotReady, slug, why)
	}
	return nil
}

// logChecksFailed records in the event log that slug's change failed the
// checks on a candidate, for the outcomes (`fleetwatch report`): a plan
// whose first such event comes before its landing did not pass the first
// time. A landing with none before it did.
func logChecksFailed(t *planfs.Tree, slug, why string) {
	t.LogEvent(planfs.Event{Event: "checks", Slug: slug, Reason: "fail: " + why})
}

// interrupted is the landing of slug that was killed after its CAS, to be
// finished; false when there is none. Whatever happened to the branches
// since (a new commit on either, the feature branch gone), the approved
// commit is in the integration branch as the second parent of the queue's
// own merge on its first-parent line.
func (r *repo) interrupted(t *planfs.Tree, slug string) (Landing, bool) {
	tip := r.tips[model.FeatureBranch(slug)]
	if tip != "" && landedBefore(t, r, slug, tip) {
		l := Landing{Slug: slug, Commit: tip, To: r.tip}
		if revParse(t.Project, r.tip+"^2") == tip {
			l.From = revParse(t.Project, r.tip+"^1")
		}
		return l, true
	}
	a, err := t.ReadApproval(slug)
	if err != nil || a == nil || !treeID.MatchString(a.Commit) {
		return Landing{}, false
	}
	if in, err := isAncestor(t.Project, a.Commit, r.tip); err != nil || !in {
		return Landing{}, false
	}
	merge, from := queueMerge(t.Project, slug, a.Commit, r.tip)
	if merge == "" {
		return Landing{}, false
	}
	return Landing{Slug: slug, Commit: a.Commit, From: from, To: merge}, true
}

// recordCutShort records the swap of a landing killed before it could
// record it (the record still names the merge's first parent), so a
// commit made after it shows as a move outside the queue.
func recordCutShort(project, integration string, l Landing) {
	if l.From == "" {
		return
	}
	_ = editIntegrationRecord(project, func(rec integrationRecord, ok bool) (integrationRecord, bool) {
		if ok && rec.Branch == integration && rec.Commit == l.From {
			return integrationRecord{Branch: integration, Commit: l.To}, true
		}
		return rec, false
	})
}

// queueMerge finds, on the first-parent line of tip after commit, the
// queue's merge of slug at commit: second parent commit, message as
// buildCommit writes it. It returns the merge and its first parent, ""
// when there is none.
func queueMerge(project, slug, commit, tip string) (string, string) {
	out, err := git(project, "log", "--first-parent", "--merges", "--format=%H %P%x1f%B%x1e", commit+".."+tip)
	if err != nil {
		return "", ""
	}
	mark := "fleetwatch queue land: " + model.FeatureBranch(slug) + " at " + commit + "."
	for _, rec := range strings.Split(out, "\x1e") {
		ids, body, _ := strings.Cut(strings.TrimSpace(rec), "\x1f")
		f := strings.Fields(ids)
		if len(f) == 3 && f[2] == commit && strings.Contains(body, mark) {
			return f[0], f[1]
		}
	}
	return "", ""
}

// landedBefore reports whether a queued entry's tip is already in the
// integration branch by a landing of its own that was cut short (killed
// after the CAS): pinned, or its plan already in completed/, or the tip
// still the approved one. A branch reset to an older commit is none of
// these, and is not taken for landed.
func landedBefore(t *planfs.Tree, r *repo, slug, tip string) bool {
	if in, err := isAncestor(t.Project, tip, r.tip); err != nil || !in {
		return false
	}
	if r.landed[slug] == tip {
		return true
	}
	if hits, _ := t.FindSlug(slug, model.Completed); len(hits) > 0 && !inReview(t, slug) {
		return true
	}
	a, err := t.ReadApproval(slug)
	return err == nil && a != nil && a.Commit == tip
}

// cas moves the integration branch from r.tip to cand, on its remote
// first when it tracks one; moved says the branch was not at r.tip.
func cas(project string, r *repo, cand string, log io.Writer) (bool, error) {
	// Again: the checks took their time.
	if err := checkoutFits(project, r.integration, r.tip, cand); err != nil {
		return false, err
	}
	if remote, err := git(project, "config", "branch."+r.integration+".remote"); err == nil && remote != "" && remote != "." {
		fmt.Fprintf(log, "pushing to %s\n", remote)
		if _, err := git(project, "push", "--force-with-lease="+model.BranchRef(r.integration)+":"+r.tip, remote, cand+":"+model.BranchRef(r.integration)); err != nil {
			return catchUp(project, r, remote, err, log)
		}
	}
	if _, err := git(project, "update-ref", "-m", "fleetwatch queue land", "refs/heads/"+r.integration, cand, r.tip); err != nil {
		if now := revParse(project, "refs/heads/"+r.integration); now != r.tip {
			return true, nil
		}
		return false, err
	}
	return false, nil
}

// catchUp follows the remote's integration branch when the push lost the
// race to another lander: it fast-forwards the local branch (CAS again) so
// the next try builds on what landed there; a remote that diverged is for
// a person to sort out.
func catchUp(project string, r *repo, remote string, pushErr error, log io.Writer) (bool, error) {
	track := "refs/remotes/" + remote + "/" + r.integration
	if _, err := git(project, "fetch", "-q", remote, "+refs/heads/"+r.integration+":"+track); err != nil {
		return false, fmt.Errorf("%s refused the push of %s (%v) and could not be fetched: %v", remote, r.integration, pushErr, err)
	}
	far := revParse(project, track)
	if in, err := isAncestor(project, r.tip, far); err != nil || !in || far == r.tip {
		return false, fmt.Errorf("%w: %s refused the push of %s (%v) and its %s is not ahead of ours; merge them, then queue land again", ErrNotReady, remote, r.integration, pushErr, r.integration)
	}
	// A checkout of the branch comes along, as with a landing of ours.
	if err := checkoutFits(project, r.integration, r.tip, far); err != nil {
		return false, err
	}
	// A CAS again: when the local branch moved meanwhile too, the next try
	// reads it afresh either way.
	if _, err := git(project, "update-ref", "refs/heads/"+r.integration, far, r.tip); err == nil {
		// Another lander's landing, brought here by the queue: not a
		// move outside it.
		_ = recordSet(project, r.integration, far)
		if w := syncCheckout(project, r.integration, r.tip, far); w != "" {
			fmt.Fprintf(log, "warning: %s\n", w)
		}
	}
	return true, nil
}

// finish does what follows the CAS: verify, sync the checkout, move the
// plan, pin, dequeue, release the worktree. Each step is safe to repeat.
func finish(t *planfs.Tree, r *repo, opt LandOptions, l Landing) (Landing, error) {
	l.Integration = r.integration
	now := revParse(t.Project, "refs/heads/"+r.integration)
	if in, err := isAncestor(t.Project, l.Commit, now); err != nil || !in {
		return l, fmt.Errorf("%s at %s is not in %s after the swap; the plan stays in review-needed/", l.Slug, short(l.Commit), r.integration)
	}
	// A branch that moved on since the swap is someone else's checkout
	// state to keep.
	if l.From != "" && l.From != l.To && now == l.To {
		if w := syncCheckout(t.Project, r.integration, l.From, l.To); w != "" {
			l.Warnings = append(l.Warnings, w)
		}
	}
	rel := reviewRel(l.Slug)
	if inReview(t, l.Slug) {
		if _, err := t.Land(rel, planfs.Agent(opt.Actor).Because("landed "+short(l.Commit)+" on "+r.integration)); err != nil {
			l.Warnings = append(l.Warnings, fmt.Sprintf("%s landed but its plan did not move to completed/: %v", l.Slug, err))
		}
	}
	failpoint("land:moved")
	if _, err := git(t.Project, "update-ref", "refs/fleetwatch/landed/"+l.Slug, l.Commit); err != nil {
		l.Warnings = append(l.Warnings, err.Error())
	}
	failpoint("land:pinned")
	if err := dequeue(t, l.Slug); err != nil {
		l.Warnings = append(l.Warnings, err.Error())
	}
	if w := forgeLanded(t.Project, l.Slug, l.To); w != "" {
		l.Warnings = append(l.Warnings, w)
	}
	if w := releaseWorktree(t, l.Slug); w != "" {
		l.Warnings = append(l.Warnings, w)
	}
	return l, nil
}

// The operator's checkout of the integration branch moves with it: git
// moves HEAD with the branch, so a landing brings the index and files
// from the old tip to the new one as `git checkout` (or `reset --keep`)
// would, a two-way merge keeping every change of the checkout's own that
// the landing does not touch (a plan move, an edited note). A change it
// would overwrite refuses the landing before the swap (checkoutFits): a
// checked-out branch is never left with its index behind its HEAD.

// checkoutOf is the worktree where branch is checked out, "" when none.
func checkoutOf(project, branch string) (string, error) {
	list, err := git(project, "worktree", "list", "--porcelain")
	if err != nil {
		return "", fmt.Errorf("could not list worktrees: %w", err)
	}
	for _, block := range strings.Split(list, "\n\n") {
		// A worktree whose folder is gone (prunable) has no files to bring.
		if strings.Contains("\n"+block, "\nprunable") {
			continue
		}
		var wt string
		for _, line := range strings.Split(block, "\n") {
			if p, ok := strings.CutPrefix(line, "worktree "); ok {
				wt = p
			}
			if line == "branch refs/heads/"+branch {
				return wt, nil
			}
		}
	}
	return "", nil
}

// checkoutFits refuses to move integration from old to new while it is
// checked out with changes the move would overwrite, naming the branch,
// the checkout, the files and what to do.
func checkoutFits(project, integration, old, new string) error {
	path, err := checkoutOf(project, integration)
	if err != nil || path == "" {
		return err
	}
	_, err = twoWay(path, old, new, "-n")
	if err == nil {
		return nil
	}
	if paths := blockedPaths(err); paths != "" {
		return refused("%s is checked out at %s with changes of its own to %s, which this landing changes: commit, stash or undo them there (or check out another branch), then queue land again",
			integration, path, paths)
	}
	return refused("%s is checked out at %s, and git cannot bring that checkout along (%v): sort it out there, then queue land again", integration, path, err)
}

// twoWay is `git read-tree -m -u old new` in the checkout at path, after
// refreshing its index's file stats (as git checkout does), so a file only
// touched is not taken for changed.
func twoWay(path, old, new string, extra ...string) (string, error) {
	_, _ = git(path, "update-index", "-q", "--refresh")
	return git(path, append([]string{"read-tree", "-m", "-u"}, append(extra, old, new)...)...)
}

// blockedPaths are the files read-tree named as in the way, "" when it
// named none.
func blockedPaths(err error) string {
	var ge *gitenv.Error
	if !errors.As(err, &ge) {
		return ""
	}
	var paths []string
	for _, m := range quotedPath().FindAllStringSubmatch(ge.Stderr, 8) {
		if !slices.Contains(paths, m[1]) {
			paths = append(paths, m[1])
		}
	}
	return strings.Join(paths, ", ")
}

// quotedPath is a path in read-tree's "Entry 'X' not uptodate" and
// "Untracked working tree file 'X' would be overwritten".
var quotedPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^error: [^']*'(.+)' (?:not uptodate|would be)`) })

// syncCheckout brings a checkout of the integration branch from old to
// new, keeping its own changes; what it cannot bring (a change made
// since checkoutFits looked) is a warning saying how to finish.
func syncCheckout(project, integration, old, new string) string {
	path, err := checkoutOf(project, integration)
	if err != nil || path == "" {
		return errText(err)
	}
	// A rerun finds the checkout at new already: read-tree keeps it.
	if _, err := twoWay(path, old, new); err != nil {
		return fmt.Sprintf("%s was left at %s although %s moved to %s (%v): once that is sorted, git -C %s read-tree -m -u %s %s brings it along",
			path, short(old), integration, short(new), err, path, short(old), short(new))
	}
	return ""
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// releaseWorktree removes the author's worktree when it holds the landed
// branch; a refusal (uncommitted work, a running agent) is a warning.
func releaseWorktree(t *planfs.Tree, slug string) string {
	author := t.Author(slug)
	if author == "" {
		return ""
	}
	wt, ok, err := look.Lookup(t.Project, author)
	if err != nil || !ok || wt.Branch != model.FeatureBranch(slug) {
		return ""
	}
	if _, err := seat.Remove(t.Project, author, false, false); err != nil {
		return fmt.Sprintf("%s's worktree %s kept: %v", author, wt.Path, err)
	}
	return ""
}

// SendBack returns a queued or conflicting entry to its worker's lane with
// note (or the conflict) under ## Review notes; it leaves the queue and its
// approval is void.
func SendBack(t *planfs.Tree, slug, note, actor string) (string, error) {
	if err := writable(t, slug); err != nil {
		return "", err
	}
	st, r, err := statusOf(t, slug)
	if err != nil {
		return "", err
	}
	if st.Rel == "" {
		return "", refused("%s is not in review-needed/", slug)
	}
	var text []string
	if len(st.ConflictPaths) > 0 {
		text = append(text, fmt.Sprintf("Sent back from the merge queue: %s at %s conflicts with %s at %s in %s.",
			st.Branch, short(st.Commit), r.integration, short(r.tip), strings.Join(st.ConflictPaths, ", ")))
	}
	if note != "" {
		text = append(text, note)
	}
	if len(text) == 0 {
		text = append(text, "Sent back from the merge queue.")
	}
	rel, err := t.SendBack(st.Rel, strings.Join(text, "\n\n"), planfs.Agent(actor).Because("send-back"))
	if err != nil {
		return "", err
	}
	_ = NoteOnForge(t, slug, strings.Join(text, "\n\n"), true)
	return rel, editQueue(t.Project, func(entries []Entry) ([]Entry, error) {
		return without(t, entries, slug), nil
	})
}
