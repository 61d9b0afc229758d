package landtest

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// queue list shows a branch with no commit of its own as "no change",
// with no checks and the reason, and a change out of its plan's scope
// with the paths; approving the first is refused.
func TestQueueListNoChangeAndOutOfScope(t *testing.T) {
	t.Parallel()
	dir := landProject(t, "checks:\n  - {name: test, run: [sh, -c, 'true']}\n")
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "review-needed/empty.md"}, 0)
	testkit.Git(t, dir, "branch", "feature/empty", "dev")
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "review-needed/wide.md", Body: "## Files in scope\n- docs/\n"}, 0)
	feature(t, dir, "wide", map[string]string{"docs/a.md": "a\n", "main.go": "package main\n"})
	r := fwtest.Run(t, dir, "queue", "list")
	fwtest.Want(t, r, 0)
	var empty, wide string
	for _, l := range strings.Split(r.Stdout, "\n") {
		switch {
		case strings.HasPrefix(l, "-  empty"):
			empty = l
		case strings.HasPrefix(l, "-  wide"):
			wide = l
		}
	}
	if !strings.Contains(empty, "no change") || strings.Contains(empty, "test:") || !strings.Contains(empty, "not ahead of the integration branch") {
		t.Errorf("the row of a branch not ahead: %q\n%s", empty, r.Stdout)
	}
	if !strings.Contains(wide, "⚠ 1 path(s) out of scope: main.go") {
		t.Errorf("the row of a change out of scope: %q\n%s", wide, r.Stdout)
	}
	if r := fwtest.Run(t, dir, "review", "empty", "--approve"); r.Code == 0 {
		t.Errorf("approving a branch with no change: %v", r)
	}
}
