package uitest

import (
	"encoding/json"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// board --json and work-once --list --json say the same of a plan a tier
// will not take: rank null, not a rank 0 that no pick order has.
func TestBoardAndListAgreeOnRank(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/free.md"}, fwtest.Plan{Rel: "features/waits.md", Fields: "Depends on: nope"},
		fwtest.Plan{Rel: "features/bobs.md", Fields: "Assignee: bob"})
	br := fwtest.Run(t, dir, "board", "--json", "--project", dir)
	lr := fwtest.Run(t, dir, "work-once", "--list", "--json", "--root", dir, "--tier", "mid")
	if br.Code != 0 || lr.Code != 0 {
		t.Fatalf("board %v\nlist %v", br, lr)
	}
	var board struct {
		Lanes []struct {
			Plans []struct {
				Path  string                                `json:"path"`
				Tiers map[string]map[string]json.RawMessage `json:"tiers"`
			} `json:"plans"`
		} `json:"lanes"`
	}
	var list struct {
		Plans []struct {
			Rel  string          `json:"rel"`
			Rank json.RawMessage `json:"rank"`
		} `json:"plans"`
	}
	if err := json.Unmarshal([]byte(br.Stdout), &board); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lr.Stdout), &list); err != nil {
		t.Fatal(err)
	}
	boardRank := map[string]string{}
	for _, l := range board.Lanes {
		for _, p := range l.Plans {
			boardRank[p.Path] = string(p.Tiers["mid"]["rank"])
		}
	}
	want := map[string]string{"features/free.md": "1", "features/waits.md": "null", "features/bobs.md": "null"}
	for _, p := range list.Plans {
		if string(p.Rank) != want[p.Rel] || boardRank[p.Rel] != want[p.Rel] {
			t.Errorf("%s: list rank %s, board rank %s, want %s", p.Rel, p.Rank, boardRank[p.Rel], want[p.Rel])
		}
	}
}
