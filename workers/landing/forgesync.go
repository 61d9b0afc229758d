package landing

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"sync"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/forge"
)

// SyncForge brings the forge's word in for every plan in review: a plan
// with no PR yet gets one (Publish); for the others, the PR's state, head
// and checks are recorded; an approval on the forge by a person who may
// push there, given on the exact commit the plan's branch is at (or the
// candidate fleetwatch pushed for it), is that person's approval here; and
// people's new comments wait in the inbox. A PR closed by hand is
// recorded as such and left alone; one merged there is followed
// (takeMerge). It returns a line per thing done.
func SyncForge(ctx context.Context, t *planfs.Tree) ([]string, error) {
	return syncForge(ctx, t, syncer{})
}

// SyncForgeInBackground is SyncForge for a face's clock: an open PR whose
// listing says it did not change since its reviews and comments were read
// costs no call of its own (but every fullEvery-th reading), so a
// project with many PRs stays within a forge's rate limits. A person's
// queue sync or queue land reads everything.
func SyncForgeInBackground(ctx context.Context, t *planfs.Tree) ([]string, error) {
	return syncForge(ctx, t, syncer{quick: true})
}

// syncer is one reading of the forge: landing says the caller holds the
// landing lock already (Land reads the forge first).
type syncer struct {
	t       *planfs.Tree
	f       forge.Forge
	me      string
	landing bool
	quick   bool // skip the quiet PRs (SyncForgeInBackground)
	// open are the open PRs into the base by number, from one listing:
	// a PR whose listing says nothing changed costs no further call.
	open map[int]forge.PR
}

// fullEvery is how many readings may skip a PR whose listing says it did
// not change (its updated time, which a forge may keep to the second)
// before one reads its reviews and comments anyway.
const fullEvery = 10

func syncForge(ctx context.Context, t *planfs.Tree, sy syncer) ([]string, error) {
	s, err := config.Load(t.Project)
	if err != nil || !s.Forge.On() {
		return nil, err
	}
	f, err := forgeOf(s)
	if err != nil {
		return nil, err
	}
	me, err := f.Me(ctx)
	if err != nil {
		return nil, fmt.Errorf("forge: %s: %v", f.Web(), err)
	}
	var said []string
	snap, err := t.Scan()
	if err != nil {
		return nil, err
	}
	sy.t, sy.f, sy.me, sy.open = t, f, me.Login, map[int]forge.PR{}
	if base, err := Integration(t.Project, s); err == nil && sy.quick {
		list, err := f.List(ctx, base)
		if err != nil {
			return nil, fmt.Errorf("forge: %s: %v", f.Web(), err)
		}
		for _, pr := range list {
			sy.open[pr.Number] = pr
		}
	}
	_, slugs := reviewPlans(snap)
	for _, slug := range slugs {
		lines, err := sy.one(ctx, slug)
		said = append(said, lines...)
		if err != nil {
			said = append(said, fmt.Sprintf("%s: %v", slug, clipLine(err.Error())))
		}
	}
	return said, nil
}

func (sy syncer) one(ctx context.Context, slug string) ([]string, error) {
	t, f, me := sy.t, sy.f, sy.me
	rec, err := ReadPR(t.Project, slug)
	if err != nil {
		return nil, err
	}
	if rec == nil || rec.Number == 0 {
		return publishMissing(ctx, t, slug)
	}
	if listed, ok := sy.open[rec.Number]; ok && sy.quick && rec.quiet(listed) {
		_, err := editPR(t.Project, slug, func(pr *PR) error { pr.take(listed, t.Now()); pr.Quiet++; return nil })
		return nil, err
	}
	w, err := readWord(ctx, f, rec.Number)
	if err != nil {
		_, _ = editPR(t.Project, slug, func(pr *PR) error { pr.Trouble = err.Error(); return nil })
		return nil, err
	}
	var said []string
	if w.pr.State != rec.State && w.pr.State != forge.StateOpen {
		said = append(said, fmt.Sprintf("%s: PR #%d was %s on the forge", slug, w.pr.Number, w.pr.State))
	}
	tip := revParse(t.Project, model.BranchRef(model.FeatureBranch(slug)))
	var approvals []forge.Review
	_, err = editPR(t.Project, slug, func(pr *PR) error {
		pr.take(w.pr, t.Now())
		pr.Updated, pr.Quiet = w.pr.Updated, 0
		approvals = pr.newApprovals(w.reviews, me, tip)
		pr.takeComments(w.comments, me)
		return nil
	})
	if err != nil {
		return said, err
	}
	if w.pr.State == forge.StateMerged {
		line, err := sy.takeMerge(ctx, slug)
		return append(said, line), err
	}
	return takeApprovals(ctx, t, f, slug, tip, approvals, said)
}

// takeMerge follows a PR the forge merged (by hand, or through its merge
// queue): once the forge's base holds the commit approved here, the local
// integration branch follows the base and the plan is completed as a
// landing of the queue's would be. Without an approval here, or with the
// approved commit not in the base, it is only said.
func (sy syncer) takeMerge(ctx context.Context, slug string) (string, error) {
	t, f := sy.t, sy.f
	a, err := t.ReadApproval(slug)
	if err != nil || a == nil {
		return fmt.Sprintf("%s: merged on the forge, but nobody approved it here: it stays in review-needed/ (review %s --approve, then queue sync)", slug, slug), err
	}
	if !sy.landing {
		unlock, err := lockLand(t.Project)
		if err != nil {
			return "", err
		}
		defer unlock()
	}
	r, err := readRepo(t.Project)
	if err != nil {
		return "", err
	}
	far, err := forgeFetch(ctx, f, t.Project, r.integration)
	if err != nil {
		return "", err
	}
	if in, _ := isAncestor(t.Project, a.Commit, far); !in {
		return fmt.Sprintf("%s: merged on the forge, but %s there does not hold the approved %s: it stays in review-needed/", slug, r.integration, short(a.Commit)), nil
	}
	if err := followBase(t.Project, r, far); err != nil {
		return "", err
	}
	l, err := finish(t, r, LandOptions{Actor: operator(), Log: io.Discard}, Landing{Slug: slug, Commit: a.Commit, From: r.tip, To: far})
	if err != nil {
		return "", err
	}
	said := fmt.Sprintf("%s: merged on the forge; %s is at %s and the plan is completed", slug, r.integration, short(far))
	for _, w := range l.Warnings {
		said += "; " + w
	}
	return said, nil
}

// followBase moves the local integration branch from r.tip to far, a
// commit ahead of it, as a landing would (the checkout comes along in
// finish).
func followBase(project string, r *repo, far string) error {
	if far == r.tip {
		return nil
	}
	if in, err := isAncestor(project, r.tip, far); err != nil || !in {
		return refused("%s on the forge (%s) is not ahead of the local %s (%s): merge them, then queue sync", r.integration, short(far), r.integration, short(r.tip))
	}
	if err := checkoutFits(project, r.integration, r.tip, far); err != nil {
		return err
	}
	if _, err := git(project, "update-ref", "-m", "fleetwatch queue sync", "refs/heads/"+r.integration, far, r.tip); err != nil {
		return err
	}
	return recordSet(project, r.integration, far)
}

// operator is who acts for the event log: $FLEET_AGENT_ID's absence means
// a person, named by $USER.
func operator() string {
	return cmp.Or(os.Getenv("USER"), "operator")
}

func publishMissing(ctx context.Context, t *planfs.Tree, slug string) ([]string, error) {
	pr, err := Publish(ctx, t, slug)
	if err != nil || pr == nil {
		return nil, err
	}
	return []string{fmt.Sprintf("%s: opened PR #%d %s", slug, pr.Number, pr.URL)}, nil
}

// word is what the forge says of one PR.
type word struct {
	pr       forge.PR
	reviews  []forge.Review
	comments []forge.Comment
}

func readWord(ctx context.Context, f forge.Forge, number int) (w word, err error) {
	if w.pr, err = f.Get(ctx, number); err != nil {
		return w, err
	}
	if w.reviews, err = f.Reviews(ctx, number); err != nil {
		return w, err
	}
	w.comments, err = f.Comments(ctx, number)
	return w, err
}

// takeApprovals makes each approval from the forge, by a person who may
// push there, an approval of tip here.
func takeApprovals(ctx context.Context, t *planfs.Tree, f forge.Forge, slug, tip string, approvals []forge.Review, said []string) ([]string, error) {
	for _, a := range approvals {
		if ok, err := f.Writer(ctx, a.Author); err != nil || !ok {
			said = append(said, fmt.Sprintf("%s: %s's approval on the forge does not count: they may not push to %s", slug, a.Author, f.Web()))
			continue
		}
		if _, err := t.WriteApproval(slug, tip, planfs.Agent(a.Author+"@"+f.Kind())); err != nil {
			return said, err
		}
		said = append(said, fmt.Sprintf("%s: approved at %s by %s on the forge", slug, short(tip), a.Author))
	}
	return said, nil
}

// quiet: the listing says the open PR did not change since its reviews
// and comments were last read, and fewer than fullEvery readings skipped it.
func (pr *PR) quiet(listed forge.PR) bool {
	return !listed.Updated.IsZero() && listed.Updated.Equal(pr.Updated) && pr.State == forge.StateOpen &&
		listed.HeadSHA == pr.Head && pr.Quiet < fullEvery
}

// newApprovals are the approvals not taken in yet, by others than the
// token's user, of the plan's tip or of the candidate pushed for it.
func (pr *PR) newApprovals(reviews []forge.Review, me, tip string) []forge.Review {
	var out []forge.Review
	seen := pr.SeenReview
	for _, r := range reviews {
		if r.ID <= pr.SeenReview {
			continue
		}
		seen = max(seen, r.ID)
		if pr.approves(r, me, tip) {
			out = append(out, r)
		}
	}
	pr.SeenReview = seen
	return out
}

// approves: r is a person's approval of the plan's tip as pushed.
func (pr *PR) approves(r forge.Review, me, tip string) bool {
	exact := tip != "" && pr.Tip == tip && (r.Commit == tip || r.Commit == pr.Pushed)
	return exact && r.State == forge.ReviewApproved && r.Author != me && loginName().MatchString(r.Author)
}

// loginName is what a forge's user name may be for fleetwatch to record
// it as an approver (a GitHub app's ends in [bot]): the forge's word is
// not trusted to be a name.
var loginName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}(\[bot\])?$`)
})

// takeComments keeps people's comments not seen yet, for the inbox.
func (pr *PR) takeComments(comments []forge.Comment, me string) {
	for _, c := range comments {
		if c.ID <= pr.SeenComment {
			continue
		}
		pr.SeenComment = max(pr.SeenComment, c.ID)
		if c.Author != me {
			pr.Comments = append(pr.Comments, c)
		}
	}
	if n := len(pr.Comments); n > maxInboxComments {
		pr.Comments = pr.Comments[n-maxInboxComments:]
	}
}

// DismissComments takes slug's forge comments out of the inbox.
func DismissComments(t *planfs.Tree, slug string) error {
	if err := writable(t, slug); err != nil {
		return err
	}
	_, err := editPR(t.Project, slug, func(pr *PR) error {
		pr.Comments = nil
		return nil
	})
	return err
}

// maxReviewBody bounds what fleetwatch posts as one review.
const maxReviewBody = 60 << 10

// forgeReview posts r on slug's PR, when it has one, bounded by
// forgeTimeout; it returns a warning line, "" when it went or there is
// no PR. A review never approves: an agent's verdict is not a person's.
func forgeReview(t *planfs.Tree, slug string, r forge.ReviewIn) string {
	if len(r.Body) > maxReviewBody {
		r.Body = r.Body[:maxReviewBody] + "\n\n…(cut)"
	}
	return onPR(t.Project, slug, "the review did not reach PR #%d", func(ctx context.Context, f forge.Forge, number int) error {
		return f.Review(ctx, number, r)
	})
}

// onPR makes one call about slug's PR, when it has one, bounded by
// forgeTimeout; it returns a warning line (failed, with the PR's number,
// then why), "" when the call went or there is no PR.
func onPR(project, slug, failed string, call func(ctx context.Context, f forge.Forge, number int) error) string {
	rec, err := ReadPR(project, slug)
	if err != nil || rec == nil || rec.Number == 0 {
		return ""
	}
	s, err := config.Load(project)
	if err != nil {
		return err.Error()
	}
	f, err := forgeOf(s)
	if err != nil || f == nil {
		return errText(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), forgeTimeout)
	defer cancel()
	if err := call(ctx, f, rec.Number); err != nil {
		return fmt.Sprintf(failed, rec.Number) + ": " + clipLine(err.Error())
	}
	return ""
}

// NoteOnForge posts a person's note on slug's PR (a needs-work note asks
// for changes), at the plan's branch tip; it returns a warning line, ""
// when it went or there is no PR.
func NoteOnForge(t *planfs.Tree, slug, note string, changes bool) string {
	tip := revParse(t.Project, model.BranchRef(model.FeatureBranch(slug)))
	word := "Deferred: "
	if changes {
		word = "Needs work: "
	}
	return forgeReview(t, slug, forge.ReviewIn{Commit: tip, RequestChanges: changes, Body: word + note})
}
