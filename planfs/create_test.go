package planfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

// leftovers lists files in a lane that are not plans: temp files a create
// failed to clean up.
func leftovers(t *testing.T, tr *Tree, lane model.Lane) []string {
	t.Helper()
	entries, err := os.ReadDir(tr.Abs(string(lane)))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); n != ".gitkeep" && !strings.HasSuffix(n, ".md") {
			out = append(out, n)
		}
	}
	return out
}

func TestAddPlanWritesAndLogs(t *testing.T) {
	tr := mkTree(t)
	text := "# Fix the login timeout\n\n- **Priority:** P1\n- **Preferred models:** mid\n\n## Done when\n- it works\n"
	rel, err := tr.AddPlan(model.Bugs, "login-timeout.md", text)
	if err != nil || rel != "bugs/login-timeout.md" {
		t.Fatalf("AddPlan = %q, %v", rel, err)
	}
	got, err := os.ReadFile(tr.Abs(rel))
	if err != nil || string(got) != text {
		t.Fatalf("file holds %q, %v", got, err)
	}
	if fi, _ := os.Stat(tr.Abs(rel)); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	p := scan(t, tr).PlanAt(rel)
	if p == nil || p.Header.Title != "Fix the login timeout" || p.Header.Priority != "P1" {
		t.Fatalf("scan sees %+v", p)
	}
	events, _ := tr.Events()
	if len(events) != 1 {
		t.Fatalf("events %+v", events)
	}
	if e := events[0]; e.Event != "create" || e.Slug != "login-timeout" || e.To != rel || e.From != "" {
		t.Errorf("event %+v", e)
	}
	if l := leftovers(t, tr, model.Bugs); len(l) > 0 {
		t.Errorf("left behind %v", l)
	}
}

func TestAddPlanAtSetsMtime(t *testing.T) {
	tr := mkTree(t)
	base := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	// Written newest first: only the chosen mtimes can put them in order.
	for i, name := range []string{"c.md", "b.md", "a.md"} {
		mt := base.Add(-time.Duration(i) * time.Hour)
		if _, err := tr.AddPlanAt(model.Features, name, "# "+name+"\n", mt); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(tr.Abs("features/" + name))
		if err != nil || !fi.ModTime().Equal(mt) {
			t.Fatalf("%s mtime %v, want %v (%v)", name, fi.ModTime(), mt, err)
		}
	}
	rows := model.Decide(scan(t, tr), model.Worker{AgentID: "w", Tier: model.Mid}, model.Options{Now: tr.NowSeconds()})
	var order []string
	for _, r := range model.Picks(rows, nil) {
		order = append(order, r.Plan.Name)
	}
	if strings.Join(order, " ") != "a.md b.md c.md" {
		t.Errorf("pick order %v, want oldest first", order)
	}
}

func TestAddPlanNeverOverwrites(t *testing.T) {
	tr := mkTree(t, "features/taken.md: - **Value:** high")
	before, _ := os.ReadFile(tr.Abs("features/taken.md"))
	_, err := tr.AddPlan(model.Features, "taken.md", "# impostor\n")
	var pe *PlanError
	if !errors.Is(err, ErrDestExists) || !errors.As(err, &pe) || pe.Rel != "features/taken.md" {
		t.Fatalf("AddPlan over a plan: %v", err)
	}
	after, _ := os.ReadFile(tr.Abs("features/taken.md"))
	if string(after) != string(before) {
		t.Errorf("plan changed to %q", after)
	}
	// The same name in another lane is another file.
	if _, err := tr.AddPlan(model.Bugs, "taken.md", "# bug\n"); err != nil {
		t.Errorf("same name in bugs/: %v", err)
	}
	if l := leftovers(t, tr, model.Features); len(l) > 0 {
		t.Errorf("left behind %v", l)
	}
}

func TestAddPlanRefusesBadNames(t *testing.T) {
	tr := mkTree(t)
	cases := []struct {
		lane model.Lane
		name string
	}{
		{"nope", "a.md"},
		{"", "a.md"},
		{".leases", "a.md"},
		{"features/sub", "a.md"},
		{model.Features, "a.txt"},
		{model.Features, "a"},
		{model.Features, ""},
		{model.Features, ".md"},
		{model.Features, ".local.md"},
		{model.Features, ".hidden.md"},
		{model.Features, "README.md"},
		{model.Features, "sub/a.md"},
		{model.Features, "../a.md"},
		{model.Features, `a\b.md`},
	}
	for _, c := range cases {
		_, err := tr.AddPlan(c.lane, c.name, "# x\n")
		var pe *PlanError
		if !errors.Is(err, ErrBadTarget) || !errors.As(err, &pe) {
			t.Errorf("AddPlan(%q, %q) = %v, want ErrBadTarget", c.lane, c.name, err)
		}
	}
	if s := scan(t, tr); len(s.Plans) != 0 {
		t.Errorf("bad names made plans: %v", rels(s))
	}
	if events, _ := tr.Events(); len(events) != 0 {
		t.Errorf("refusals logged %+v", events)
	}
	if _, err := os.Stat(filepath.Join(tr.Project, "a.md")); err == nil {
		t.Error("a plan escaped the tree")
	}
}

func TestAddPlanLocalAndMissingLane(t *testing.T) {
	tr := mkTree(t)
	os.RemoveAll(tr.Abs(string(model.Blocked)))
	if _, err := tr.AddPlan(model.Blocked, "mine.local.md", "# mine\n"); err != nil {
		t.Fatal(err)
	}
	p := scan(t, tr).PlanAt("blocked/mine.local.md")
	if p == nil || !p.Local || p.Slug != "mine" {
		t.Fatalf("scan sees %+v", p)
	}
}

func TestAddPlanRefusesSymlinkedLane(t *testing.T) {
	tr := mkTree(t)
	outside := t.TempDir()
	os.RemoveAll(tr.Abs("features"))
	if err := os.Symlink(outside, tr.Abs("features")); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.AddPlan(model.Features, "a.md", "# a\n"); err == nil {
		t.Fatal("wrote through a symlinked lane")
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("wrote outside the tree: %v", entries)
	}
}

func TestAddPlanRaceOneWins(t *testing.T) {
	tr := mkTree(t)
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = tr.AddPlan(model.Bugs, "race.md", strings.Repeat(string(rune('a'+i)), 4096))
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrDestExists):
			t.Errorf("loser got %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d winners", won)
	}
	data, _ := os.ReadFile(tr.Abs("bugs/race.md"))
	if len(data) != 4096 || strings.Count(string(data), string(data[:1])) != 4096 {
		t.Errorf("file is a mix of writers: %d bytes", len(data))
	}
	if l := leftovers(t, tr, model.Bugs); len(l) > 0 {
		t.Errorf("left behind %v", l)
	}
}

func TestAddPlanNeverShowsHalfAFile(t *testing.T) {
	tr := mkTree(t)
	text := "# big\n" + strings.Repeat("line of a long plan body\n", 40000)
	done := make(chan struct{})
	var partial []int
	go func() {
		defer close(done)
		for i := 0; i < 100000; i++ {
			data, err := os.ReadFile(tr.Abs("features/big.md"))
			if err != nil {
				continue
			}
			if len(data) != len(text) {
				partial = append(partial, len(data))
			}
			return
		}
	}()
	if _, err := tr.AddPlan(model.Features, "big.md", text); err != nil {
		t.Fatal(err)
	}
	<-done
	if len(partial) > 0 {
		t.Errorf("a reader saw %d of %d bytes", partial[0], len(text))
	}
}
