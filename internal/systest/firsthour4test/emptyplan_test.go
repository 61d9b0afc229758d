package firsthour4test

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// The plan `new --no-edit` used to write to a ready lane, its Goal empty
// and a bare `-` under Done when: new refuses it in one line naming the
// flags to give, and writes it whole with them; written by hand, check
// names its file and line and exits 1, and no worker claims it (--run says
// why) while the plan beside it is claimed; promote refuses such a draft.
func TestAnEmptyPlanIsNeverClaimed(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t)
	r := fwtest.Run(t, dir, "new", "empty", "--lane", "features", "--models", "mid", "--no-edit")
	fwtest.OneLineError(t, r, "give --goal TEXT and --done-when TEXT")
	if r.Code != 2 || fwtest.Exists(dir, "features/empty.md") {
		t.Fatalf("new --no-edit of an empty plan for features/: %v", r)
	}
	r = fwtest.Run(t, dir, "new", "full", "--lane", "features", "--models", "mid", "--no-edit", "--goal", "Log in works", "--done-when", "the login test passes")
	if r.Code != 0 || !fwtest.Exists(dir, "features/full.md") {
		t.Fatalf("new with --goal and --done-when: %v", r)
	}
	if r := fwtest.Run(t, dir, "new", "idea", "--no-edit"); r.Code != 0 || !fwtest.Exists(dir, "drafts/idea.md") {
		t.Fatalf("an empty draft: %v", r)
	}
	if r := fwtest.Run(t, dir, "check"); r.Code != 0 {
		t.Fatalf("check with an empty draft: %v", r)
	}
	if r := fwtest.Run(t, dir, "promote", "idea", "--to", "features"); r.Code != 2 || !strings.Contains(r.Stderr, "## Goal and ## Done when sections are empty") {
		t.Errorf("promote of an empty draft: %v", r)
	}
	empty := "# Empty\n\n- **Value:** high\n- **Priority:** P1\n- **Preferred models:** mid\n- **Depends on:** none\n\n## Goal\n\n## Context\n\n## Steps\n\n1.\n\n## Done when\n\n-\n"
	writeFile(t, dir, ".plans/features/empty.md", empty)
	r = fwtest.Run(t, dir, "check")
	if r.Code != 1 || !strings.Contains(r.Stdout, "features/empty.md:8: ## Goal and ## Done when sections are empty") {
		t.Errorf("check of an empty plan: %v", r)
	}
	writeFile(t, dir, "endpoints.yaml", "endpoints:\n  - name: own\n    tier: mid\n    command: [/bin/true]\n")
	r = fwtest.Run(t, dir, "work-once", "--run", "--endpoint", "own", "--agent-id", "w1", "--max-plans", "2")
	if !strings.Contains(r.Stderr, "skipped features/empty.md: ## Goal and ## Done when sections are empty") || !fwtest.Exists(dir, "features/empty.md") {
		t.Errorf("work-once --run: %v", r)
	}
	if fwtest.Exists(dir, "features/full.md") {
		t.Errorf("the plan beside the empty one was not claimed: %v", r)
	}
	if r := fwtest.Run(t, dir, "work-once", "--once", "--tier", "mid", "--agent-id", "w2"); r.Code != 1 || !fwtest.Exists(dir, "features/empty.md") {
		t.Errorf("work-once --once: %v", r)
	}
	if r := fwtest.Run(t, dir, "work-once", "--slug", "empty", "--tier", "mid", "--agent-id", "w2"); r.Code == 0 || !fwtest.Exists(dir, "features/empty.md") {
		t.Errorf("work-once --slug empty: %v", r)
	}
}
