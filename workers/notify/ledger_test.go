package notify

import (
	"testing"

	"fleetwatch/model"
)

// TestFleetIDIsTheSameOnEveryMachine: a worker's notices name it "agent"
// on its own machine and "agent on host" on the others; in the ledger
// both are one notice.
func TestFleetIDIsTheSameOnEveryMachine(t *testing.T) {
	t.Setenv("FLEET_HOST", "gpu-box")
	one := 1
	facts := func(on string) []model.Notice {
		return model.Conditions(model.NoticeFacts{Now: 1000, Workers: []model.WorkerFact{
			{Agent: "gpu-1" + on, Plan: "bugs/a.md", Health: "exited", Exit: &one, Started: 100},
			{Agent: "gpu-2" + on, Health: "dead", Started: 200},
		}})
	}
	own, theirs := facts(""), facts(" on gpu-box")
	if len(own) != 2 || len(theirs) != 2 {
		t.Fatalf("notices: %v %v", own, theirs)
	}
	for i := range own {
		if own[i].ID == theirs[i].ID {
			t.Fatalf("the two machines' IDs are already one (%s): the test tests nothing", own[i].ID)
		}
		if a, b := fleetID(own[i]), fleetID(theirs[i]); a != b {
			t.Errorf("in the ledger %q and %q differ", a, b)
		}
	}
	plan := model.Notice{ID: "review:review-needed/a.md", Subject: model.SubjectPlan, Key: "review-needed/a.md"}
	if fleetID(plan) != plan.ID {
		t.Errorf("a plan's notice is the same everywhere: %q", fleetID(plan))
	}
	if ledgerKey("https://hooks.example/a", "x") == ledgerKey("https://hooks.example/b", "x") {
		t.Error("two hooks share a key")
	}
}
