package landing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

// A warm read asks git two things in all (the integration tip and every
// branch tip), never one per candidate.
func TestListWarmCacheMakesNoGitCallPerCandidate(t *testing.T) {
	tr, slugs := benchProject(t, 30, "checks:\n  - {name: test, run: [sh, -c, 'true']}\n")
	approveAndQueue(t, tr, slugs[:5])
	cold := testkit.GitRuns(t, func() {
		if _, err := List(tr.Project); err != nil {
			t.Fatal(err)
		}
	})
	var l Listing
	warm := testkit.GitRuns(t, func() {
		var err error
		if l, err = List(tr.Project); err != nil {
			t.Fatal(err)
		}
	})
	if warm > 3 || cold < 30 {
		t.Errorf("git runs: %d cold, %d warm; want ≥ 30 cold and ≤ 3 warm", cold, warm)
	}
	if len(l.Items) != 30 || l.Items[0].Slug != "c000" || l.Items[0].State != Queued || l.Items[5].State != NeedsReview {
		t.Errorf("listing: %+v", l.Items[:6])
	}
}

func TestQueueFileRefusedWhenBroken(t *testing.T) {
	tr, _ := benchProject(t, 1, "")
	dir := filepath.Join(tr.Project, "var", "fleet", "queue")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "queue.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := List(tr.Project)
	if err == nil || !strings.Contains(err.Error(), "queue.json") {
		t.Errorf("a broken queue.json: %v", err)
	}
}

// The candidate commit is the same each time it is built.
func TestBuildCommitIsStable(t *testing.T) {
	tr, slugs := benchProject(t, 1, "")
	tip, _ := git(tr.Project, "rev-parse", "feature/"+slugs[0])
	d, err := derive(tr.Project, "dev", tip)
	if err != nil {
		t.Fatal(err)
	}
	one, err := buildCommit(tr.Project, "dev", tip, d.Tree, slugs[0], "c")
	if err != nil {
		t.Fatal(err)
	}
	two, _ := buildCommit(tr.Project, "dev", tip, d.Tree, slugs[0], "c")
	if one != two || one == "" {
		t.Errorf("built %s, then %s", one, two)
	}
}

// A branch with no commit of its own is no change: no checks (they would
// be the integration branch's), and it says why. A change touching paths
// outside its plan's scope names them.
func TestListNoChangeAndScopeViolations(t *testing.T) {
	tr, slugs := benchProject(t, 2, "checks:\n  - {name: test, run: [sh, -c, 'true']}\n")
	if _, err := git(tr.Project, "branch", "feature/empty", "dev"); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(tr.Project, ".plans", "review-needed", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("empty.md", "# Plan: empty\n")
	write(slugs[0]+".md", "# Plan: scoped\n\n## Files in scope\n- docs/\n")
	l, err := List(tr.Project)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Status{}
	for _, s := range l.Items {
		got[s.Slug] = s
	}
	if e := got["empty"]; e.State != NoChange || len(e.Checks) != 0 || !strings.Contains(e.Why, "not ahead") {
		t.Errorf("a branch not ahead: %s (%s), checks %v", e.State, e.Why, e.Checks)
	}
	if s := got[slugs[0]]; len(s.ScopeViolations) != 1 || s.ScopeViolations[0] != slugs[0]+".txt" {
		t.Errorf("the scoped change's violations: %v", s.ScopeViolations)
	}
	if s := got[slugs[1]]; len(s.ScopeViolations) != 0 || s.State != NeedsReview || len(s.Checks) != 1 {
		t.Errorf("an unscoped change: %s, violations %v, checks %v", s.State, s.ScopeViolations, s.Checks)
	}
}

// With batches the listing shows the next batch's chain; warm, it builds
// none of it again.
func TestListBatchWarmMakesNoGitCallPerLink(t *testing.T) {
	tr, slugs := benchProject(t, 30, "checks:\n  - {name: test, run: [sh, -c, 'true']}\nqueue: {batch: 8}\n")
	approveAndQueue(t, tr, slugs[:12])
	if _, err := List(tr.Project); err != nil {
		t.Fatal(err)
	}
	var l Listing
	warm := testkit.GitRuns(t, func() {
		var err error
		if l, err = List(tr.Project); err != nil {
			t.Fatal(err)
		}
	})
	if warm > 3 {
		t.Errorf("git runs warm: %d, want ≤ 3", warm)
	}
	if l.Batch == nil || strings.Join(l.Batch.Slugs, " ") != strings.Join(slugs[:8], " ") || l.Batch.Bisection != nil {
		t.Fatalf("the next batch: %+v", l.Batch)
	}
}
