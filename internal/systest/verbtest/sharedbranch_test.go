package verbtest

// Two plans never share a branch: `new` refuses a slug whose branch another
// plan makes, every claim skips both plans with the reason, and check
// reports them.

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

func TestNewRefusesASlugWhoseBranchIsTaken(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a-b.md", Fields: "Preferred models: mid"}, fwtest.Plan{Rel: "completed/c d.md"})
	for slug, other := range map[string]string{"a+b": "features/a-b.md", "c+d": "completed/c d.md", "A~b": "features/a-b.md"} {
		r := fwtest.Run(t, dir, "new", slug, "--no-edit")
		fwtest.OneLineError(t, r, slug, other, "feature/")
		if !strings.Contains(r.Stderr, "share branch") {
			t.Errorf("new %s: %q does not say the branch is shared", slug, r.Stderr)
		}
	}
	for rel := range filesOf(t, dir) {
		if strings.HasPrefix(rel, "drafts/") && !strings.HasSuffix(rel, ".gitkeep") {
			t.Errorf("new wrote %s", rel)
		}
	}
}

func TestClaimsSkipPlansSharingABranch(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "bugs/a+b.md", Fields: "Priority: P1; Preferred models: mid"},
		fwtest.Plan{Rel: "features/a-b.md", Fields: "Priority: P1; Preferred models: mid"},
		fwtest.Plan{Rel: "features/next.md", Fields: "Preferred models: mid"},
	)
	r := fwtest.Run(t, dir, "work-once", "--list", "--tier", "mid")
	fwtest.Want(t, r, fwtest.ExitOK)
	for _, want := range []string{"bugs/a+b.md  its branch feature/a-b is also features/a-b.md's", "features/a-b.md  its branch feature/a-b is also bugs/a+b.md's"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("--list stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	// Named: refused, naming both.
	r = fwtest.Run(t, dir, "work-once", "--tier", "mid", "--agent-id", "w1", "--path", "features/a-b.md")
	if r.Code == fwtest.ExitOK || !strings.Contains(r.Stderr, "bugs/a+b.md") || fwtest.Exists(dir, "in-progress/a-b.md") {
		t.Errorf("--path of a shared-branch plan: %v", r)
	}
	// A bare pick takes the plan after them.
	r = fwtest.Run(t, dir, "work-once", "--tier", "mid", "--agent-id", "w1")
	fwtest.Want(t, r, fwtest.ExitOK)
	if !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "in-progress/next.md") {
		t.Errorf("bare pick: %v", r)
	}
	r = fwtest.Run(t, dir, "check")
	for _, want := range []string{"bugs/a+b.md", "features/a-b.md", "two plans never share a branch"} {
		if !strings.Contains(r.Stdout+r.Stderr, want) {
			t.Errorf("check does not say %q: %v", want, r)
		}
	}
	if r.Code == fwtest.ExitOK {
		t.Errorf("check exits 0 with a shared branch: %v", r)
	}
}
