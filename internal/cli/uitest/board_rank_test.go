package uitest

import (
	"encoding/json"
	"testing"
)

// board --json and work-once --list --json say the same of a plan a tier
// will not take: rank null, not a rank 0 that no pick order has.
func TestBoardAndListAgreeOnRank(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "features/free.md"}, plan{rel: "features/waits.md", fields: "Depends on: nope"},
		plan{rel: "features/bobs.md", fields: "Assignee: bob"})
	br := fw(t, dir, "board", "--json", "--project", dir)
	lr := fw(t, dir, "work-once", "--list", "--json", "--root", dir, "--tier", "mid")
	if br.code != 0 || lr.code != 0 {
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
	if err := json.Unmarshal([]byte(br.stdout), &board); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lr.stdout), &list); err != nil {
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
