package workers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/seat"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// A tag named like a branch never stands in for it: with a tag dev on the
// plan's first commit (a bare dev would hide that commit from the diff and
// the ahead count) and a tag feature/x on dev's tip (a bare feature/x would
// show no change at all), every reading uses the branches.
func TestTagsNeverStandInForBranches(t *testing.T) {
	dir := testkit.Repo(t)
	wt, err := seat.Ensure(dir, "a", "x")
	if err != nil {
		t.Fatal(err)
	}
	devTip := testkit.Git(t, dir, "rev-parse", "refs/heads/dev")
	for _, f := range []string{"one.txt", "two.txt"} {
		os.WriteFile(filepath.Join(wt.Path, f), []byte(f+"\n"), 0o644)
		testkit.Git(t, wt.Path, "add", f)
		testkit.Git(t, wt.Path, "commit", "-q", "-m", f)
	}
	first := testkit.Git(t, wt.Path, "rev-parse", "HEAD~1")
	testkit.Git(t, dir, "tag", "dev", first)
	testkit.Git(t, dir, "tag", "feature/x", devTip)

	check := func(what string, d look.Diff, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var names []string
		for _, f := range d.Committed {
			names = append(names, f.Path)
		}
		if d.Branch != "feature/x" || d.Integration != "dev" || d.Base != devTip || !slices.Equal(names, []string{"one.txt", "two.txt"}) {
			t.Errorf("%s: %s against %s from %.7s: %v; want feature/x against dev from %.7s: one.txt two.txt", what, d.Branch, d.Integration, d.Base, names, devTip)
		}
	}
	d, err := look.DiffOfPlan(dir, "x")
	check("DiffOfPlan", d, err)
	d, err = look.DiffOfWorktree(dir, wt.Path)
	check("DiffOfWorktree", d, err)

	if st := look.Inspect(dir, []tree.Worktree{wt})[0]; st.Err != "" || st.Ahead != 2 || st.Behind != 0 {
		t.Errorf("inspect: %+v, want 2 ahead", st)
	}
	if d, err := look.ReadWorktreeDetail(dir, "a"); err != nil || d.Base != "dev" || d.Ahead != 2 {
		t.Errorf("detail: base %q, %d ahead, %v", d.Base, d.Ahead, err)
	}

	// New branches start at the branch dev, not the tag (nor fail as
	// ambiguous).
	b, err := seat.Ensure(dir, "b", "y")
	if err != nil {
		t.Fatal(err)
	}
	if got := testkit.Git(t, b.Path, "rev-parse", "HEAD"); got != devTip {
		t.Errorf("feature/y starts at %.7s, want dev's %.7s", got, devTip)
	}

	// Both commits count when removing.
	if _, err := seat.Remove(dir, "a", true, true); err != nil {
		t.Fatal(err)
	}
	r, err := seat.Remove(dir, "b", false, true)
	if err != nil || !r.BranchDeleted {
		t.Errorf("feature/y, merged in dev, was kept: %+v %v", r, err)
	}
	if !strings.Contains(testkit.Git(t, dir, "branch", "--list", "feature/x"), "feature/x") {
		t.Error("feature/x, 2 commits ahead of dev, was deleted")
	}
}
