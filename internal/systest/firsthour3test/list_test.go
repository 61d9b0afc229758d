package firsthour3test

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// work-once --list showed a small plan to a mid worker with "overqualified"
// in its fit column and nothing saying the worker would never take it.
func TestListSaysWhichPlansTheWorkerWillNotTake(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "features/tiny-fix.md", Fields: "Preferred models: small"},
		fwtest.Plan{Rel: "features/export.md", Fields: "Preferred models: mid"},
	)
	r := fwtest.Run(t, dir, "work-once", "--list", "--root", dir, "--tier", "mid", "--agent-id", "mid-1")
	fwtest.Want(t, r, 0)
	if !strings.Contains(r.Stdout, "features/tiny-fix.md\t") {
		t.Fatalf("the table lacks the small plan:\n%s", r.Stdout)
	}
	if !strings.Contains(r.Stderr, "#   features/tiny-fix.md  will not take: overqualified") {
		t.Errorf("nothing says the mid worker will not take the small plan:\n%s", r.Stderr)
	}
	if strings.Contains(r.Stderr, "features/export.md  will not take") {
		t.Errorf("the plan it takes is said to be skipped:\n%s", r.Stderr)
	}
}
