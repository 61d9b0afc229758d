package landtest

import (
	"path/filepath"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// A tag named dev or feature/<slug> never stands in for the branch. The
// agent slips an unreviewed commit under the approved one and tags it dev:
// measured from the tag, the branch is the approved change rebased, and
// the approval would hold; measured from the branch dev it does not. A tag
// feature/a on dev's tip would make the candidate look empty.
func TestTagsNamedLikeBranchesAreIgnored(t *testing.T) {
	t.Parallel()
	dir := landProject(t, passCheck)
	approved := feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	approve(t, dir, "a")
	devTip := fwtest.GitOut(t, dir, "rev-parse", "refs/heads/dev")

	wt := filepath.Join(t.TempDir(), "wt")
	testkit.Git(t, dir, "worktree", "add", "-q", wt, "feature/a")
	testkit.Git(t, wt, "reset", "-q", "--hard", "refs/heads/dev")
	write(t, wt, "evil.txt", "unreviewed\n")
	testkit.Git(t, wt, "add", "evil.txt")
	testkit.Git(t, wt, "commit", "-q", "-m", "unreviewed")
	evil := testkit.Git(t, wt, "rev-parse", "HEAD")
	testkit.Git(t, wt, "cherry-pick", approved)
	tip := testkit.Git(t, wt, "rev-parse", "HEAD")
	testkit.Git(t, dir, "worktree", "remove", "--force", wt)
	testkit.Git(t, dir, "tag", "dev", evil)
	testkit.Git(t, dir, "tag", "feature/a", devTip)

	var item *struct{ commit, approvedBy string }
	for _, it := range list(t, dir).Items {
		if it.Slug == "a" {
			item = &struct{ commit, approvedBy string }{it.Commit, it.ApprovedBy}
			if it.Ahead != 2 {
				t.Errorf("a is %d ahead of dev, want 2", it.Ahead)
			}
		}
	}
	if item == nil || item.commit != tip || item.approvedBy != "" {
		t.Fatalf("a in queue list: %+v, want commit %s and no approval", item, tip)
	}
	r := fwtest.Run(t, dir, "queue", "add", "a")
	fwtest.Want(t, r, 2)
	fwtest.OneLineError(t, r, "stale")

	// Approved again, at its real tip, it lands the branch, not the tag.
	queued(t, dir, "a")
	fwtest.Want(t, land(t, dir, nil), 0)
	if _, err := gitCmd(dir, "merge-base", "--is-ancestor", tip, "refs/heads/dev"); err != nil {
		t.Errorf("a's tip %s is not in dev", tip)
	}
	if got := fwtest.GitOut(t, dir, "rev-parse", "refs/tags/dev"); got != evil {
		t.Errorf("the tag dev moved to %s", got)
	}
	if got := fwtest.GitOut(t, dir, "rev-parse", "refs/fleetwatch/landed/a"); got != tip {
		t.Errorf("refs/fleetwatch/landed/a = %s, want %s", got, tip)
	}
}
