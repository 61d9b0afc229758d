package model

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

const now = 1_800_000_000.0 // Unix seconds used as "now" by these tests

func rels(rows []*Row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Plan.Rel)
	}
	return out
}

// picks returns the rels a bare pick would take, in order.
func picks(s *Snapshot, w Worker, opt Options) []string {
	return rels(Picks(Decide(s, w, opt), nil))
}

func rowOf(rows []Row, rel string) *Row {
	for i := range rows {
		if rows[i].Plan.Rel == rel {
			return &rows[i]
		}
	}
	return nil
}

var (
	midWorker   = Worker{AgentID: "w1", Tier: Mid, Model: "Qwen3 32B"}
	smallWorker = Worker{AgentID: "tiny", Tier: Small, Model: "tiny"}
)

func TestReadyOrder(t *testing.T) {
	tests := []struct {
		name  string
		plans []Plan
		want  []string
	}{
		{
			"TESTS 18: bugs first, then value",
			[]Plan{
				mkPlan("features/low.md", 1, "- **Value:** low"),
				mkPlan("features/high.md", 2, "- **Value:** high"),
				mkPlan("bugs/zzz.md", 3, "- **Value:** low"),
			},
			[]string{"bugs/zzz.md", "features/high.md", "features/low.md"},
		},
		{
			"TESTS 26: lane beats priority beats value",
			[]Plan{
				mkPlan("features/p2high.md", 1, "- **Priority:** P2", "- **Value:** high"),
				mkPlan("features/p1low.md", 2, "- **Priority:** P1", "- **Value:** low"),
				mkPlan("bugs/p1bug.md", 3, "- **Priority:** P1", "- **Value:** low"),
			},
			[]string{"bugs/p1bug.md", "features/p1low.md", "features/p2high.md"},
		},
		{
			"TESTS 27: no priority reads as P2",
			[]Plan{
				mkPlan("features/noprio.md", 1, "- **Value:** high"),
				mkPlan("features/p1.md", 2, "- **Priority:** P1", "- **Value:** low"),
			},
			[]string{"features/p1.md", "features/noprio.md"},
		},
		{
			"P3 bug before P1 feature",
			[]Plan{
				mkPlan("features/urgent.md", 1, "- **Priority:** P1", "- **Value:** high"),
				mkPlan("bugs/minor.md", 2, "- **Priority:** P3", "- **Value:** low"),
			},
			[]string{"bugs/minor.md", "features/urgent.md"},
		},
		{
			"mtime oldest first, then lower-cased name",
			[]Plan{
				mkPlan("features/new.md", 300),
				mkPlan("features/b.md", 100),
				mkPlan("features/A.md", 100),
				mkPlan("features/c.md", 100),
				mkPlan("features/old.md", 50),
			},
			[]string{"features/old.md", "features/A.md", "features/b.md", "features/c.md", "features/new.md"},
		},
		{
			"fit never changes order (good and unknown interleave)",
			[]Plan{
				mkPlan("features/u1.md", 1),
				mkPlan("features/g1.md", 2, "- **Preferred models:** mid"),
				mkPlan("features/u2.md", 3, "- **Preferred models:** claude sonnet 5"),
				mkPlan("features/g2.md", 4, "- **Preferred models:** qwen3 32b"),
			},
			[]string{"features/u1.md", "features/g1.md", "features/u2.md", "features/g2.md"},
		},
		{
			"TESTS 55: drafts are not ready",
			[]Plan{mkPlan("drafts/secret.md", 1), mkPlan("features/ready.md", 2)},
			[]string{"features/ready.md"},
		},
	}
	for _, tt := range tests {
		s := &Snapshot{Plans: tt.plans}
		if got := picks(s, midWorker, Options{Now: now}); !slices.Equal(got, tt.want) {
			t.Errorf("%s: picks %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPick(t *testing.T) {
	tests := []struct {
		name   string
		plans  []Plan
		leases []Lease
		w      Worker
		opt    Options
		want   []string          // eligible rels in pick order
		reason map[string]string // rel → a substring of its skip reason
	}{
		{
			name: "TESTS 42: assignment beats lane and priority",
			plans: []Plan{
				mkPlan("bugs/human.md", 1, "- **Priority:** P1", "- **Assignee:** alice"),
				mkPlan("features/mine.md", 2, "- **Assignee:** ai"),
			},
			w: midWorker, want: []string{"features/mine.md"},
			reason: map[string]string{"bugs/human.md": "assigned to alice"},
		},
		{
			name:  "TESTS 43: only a human's plan",
			plans: []Plan{mkPlan("features/hers.md", 1, "- **Assignee:** dana")},
			w:     midWorker, want: nil,
			reason: map[string]string{"features/hers.md": "assigned to dana"},
		},
		{
			name:  "TESTS 44: human's plan even with both overrides",
			plans: []Plan{mkPlan("features/hers.md", 1, "- **Assignee:** dana — reviewer")},
			w:     midWorker, opt: Options{NoFitCheck: true, NoDepCheck: true}, want: nil,
			reason: map[string]string{"features/hers.md": "assigned to dana"},
		},
		{
			name:  "assignee that is all note is a person's",
			plans: []Plan{mkPlan("features/hers.md", 1, "- **Assignee:** (tbd)")},
			w:     midWorker, want: nil,
			reason: map[string]string{"features/hers.md": "assigned to (tbd)"},
		},
		{
			name: "TESTS 49: fit picks the easy plan",
			plans: []Plan{
				mkPlan("features/hard.md", 1, "- **Preferred models:** reasoner, frontier"),
				mkPlan("features/easy.md", 2, "- **Preferred models:** small"),
			},
			w: smallWorker, want: []string{"features/easy.md"},
			reason: map[string]string{"features/hard.md": "underqualified"},
		},
		{
			name:  "TESTS 50: nothing fits",
			plans: []Plan{mkPlan("features/hard.md", 1, "- **Preferred models:** reasoner")},
			w:     smallWorker, want: nil,
		},
		{
			name:  "TESTS 51: no-fit-check",
			plans: []Plan{mkPlan("features/hard.md", 1, "- **Preferred models:** reasoner")},
			w:     smallWorker, opt: Options{NoFitCheck: true}, want: []string{"features/hard.md"},
		},
		{
			name:  "overqualified is skipped",
			plans: []Plan{mkPlan("features/easy.md", 1, "- **Preferred models:** small")},
			w:     Worker{AgentID: "big", Tier: Frontier}, want: nil,
			reason: map[string]string{"features/easy.md": "overqualified"},
		},
		{
			name: "TESTS 37/38: unknown fit is eligible",
			plans: []Plan{
				mkPlan("features/unlabeled.md", 1),
				mkPlan("features/named.md", 2, "- **Preferred models:** Claude Sonnet 5, Grok 4.5"),
			},
			w: smallWorker, want: []string{"features/unlabeled.md", "features/named.md"},
		},
		{
			name: "TESTS 101: unmet dependency is skipped",
			plans: []Plan{
				mkPlan("features/app.md", 1, dependsOn("base")),
				mkPlan("features/base.md", 2),
			},
			w: midWorker, want: []string{"features/base.md"},
			reason: map[string]string{"features/app.md": "deps UNMET: base (open:features)"},
		},
		{
			name: "TESTS 103: met dependency is picked",
			plans: []Plan{
				mkPlan("features/app.md", 1, dependsOn("base")),
				mkPlan("completed/base.md", 2),
			},
			w: midWorker, want: []string{"features/app.md"},
		},
		{
			name: "no-dep-check",
			plans: []Plan{
				mkPlan("features/app.md", 1, dependsOn("nope")),
				mkPlan("features/self.md", 2, dependsOn("self")),
			},
			w: midWorker, opt: Options{NoDepCheck: true}, want: []string{"features/app.md", "features/self.md"},
		},
		{
			name:  "cycle is skipped",
			plans: []Plan{mkPlan("features/self.md", 2, dependsOn("self"))},
			w:     midWorker, want: nil,
			reason: map[string]string{"features/self.md": "self (cycle)"},
		},
		{
			name: "history meets a dependency",
			plans: []Plan{
				mkPlan("features/app.md", 1, dependsOn("old")),
			},
			w: midWorker, opt: Options{History: func(s string) bool { return s == "old" }}, want: []string{"features/app.md"},
		},
		{
			name: "TESTS 56/57: an in-progress plan is never picked, by anyone",
			plans: []Plan{
				mkPlan("features/ready.md", 1),
				mkPlan("in-progress/taken.md", 2),
			},
			leases: []Lease{{Plan: "in-progress/taken.md", Rel: "in-progress/taken.md", AgentID: "agent-a", ExpiresAt: now + 600}},
			w:      Worker{AgentID: "agent-a", Tier: Mid}, want: []string{"features/ready.md"},
			reason: map[string]string{"in-progress/taken.md": "not ready"},
		},
		{
			name: "TESTS 58: no fallback to one's own in-progress plan",
			plans: []Plan{
				mkPlan("in-progress/ready.md", 1),
				mkPlan("in-progress/taken.md", 2),
			},
			leases: []Lease{
				{Rel: "in-progress/taken.md", AgentID: "agent-a", ExpiresAt: now + 600},
				{Rel: "in-progress/ready.md", AgentID: "agent-b", ExpiresAt: now + 600},
			},
			w: Worker{AgentID: "agent-a", Tier: Mid}, opt: Options{NoFitCheck: true, NoDepCheck: true}, want: nil,
		},
		{
			name: "active lease on a ready plan",
			plans: []Plan{
				mkPlan("features/a.md", 1),
				mkPlan("features/b.md", 2),
			},
			leases: []Lease{{Rel: "features/a.md", AgentID: "w2", ExpiresAt: now + 1}},
			w:      midWorker, opt: Options{NoFitCheck: true, NoDepCheck: true}, want: []string{"features/b.md"},
			reason: map[string]string{"features/a.md": "leased by w2"},
		},
		{
			name: "one's own active lease on a ready plan also blocks",
			plans: []Plan{
				mkPlan("features/a.md", 1),
			},
			leases: []Lease{{Rel: "features/a.md", AgentID: "w1", ExpiresAt: now + 1}},
			w:      midWorker, want: nil,
			reason: map[string]string{"features/a.md": "leased by w1"},
		},
		{
			name: "expired lease does not block",
			plans: []Plan{
				mkPlan("features/a.md", 1),
				mkPlan("features/b.md", 2),
			},
			leases: []Lease{{Rel: "features/a.md", AgentID: "w2", ExpiresAt: now}},
			w:      midWorker, want: []string{"features/a.md", "features/b.md"},
		},
		{
			name: "corrupt lease blocks",
			plans: []Plan{
				mkPlan("features/a.md", 1),
				mkPlan("features/b.md", 2),
			},
			leases: []Lease{{Rel: "features/a.md", Corrupt: "not a JSON object"}},
			w:      midWorker, opt: Options{NoFitCheck: true, NoDepCheck: true}, want: []string{"features/b.md"},
			reason: map[string]string{"features/a.md": "not a JSON object"},
		},
		{
			name: "a lease on another rel does not block",
			plans: []Plan{
				mkPlan("features/a.md", 1),
			},
			leases: []Lease{{Rel: "bugs/a.md", AgentID: "w2", ExpiresAt: now + 100}},
			w:      midWorker, want: []string{"features/a.md"},
		},
		{
			name: "parked, review-needed, drafts and completed are never picked",
			plans: []Plan{
				mkPlan("ambiguous/a.md", 1), mkPlan("blocked/b.md", 1), mkPlan("review-needed/r.md", 1),
				mkPlan("drafts/d.md", 1), mkPlan("completed/c.md", 1), mkPlan("features/f.md", 9),
			},
			w: midWorker, opt: Options{NoFitCheck: true, NoDepCheck: true}, want: []string{"features/f.md"},
			reason: map[string]string{"ambiguous/a.md": "not ready", "completed/c.md": "not ready"},
		},
	}
	for _, tt := range tests {
		if tt.opt.Now == 0 {
			tt.opt.Now = now
		}
		s := &Snapshot{Plans: tt.plans, Leases: tt.leases}
		rows := Decide(s, tt.w, tt.opt)
		if got := rels(Picks(rows, nil)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: picks %q, want %q", tt.name, got, tt.want)
		}
		for rel, sub := range tt.reason {
			r := rowOf(rows, rel)
			if r == nil || r.Eligible || !strings.Contains(r.Reason, sub) {
				t.Errorf("%s: %s: row %+v, want skipped with reason containing %q", tt.name, rel, r, sub)
			}
		}
		checkRows(t, tt.name, rows, len(tt.plans))
	}
}

// checkRows asserts the invariants of Decide's result.
func checkRows(t *testing.T, name string, rows []Row, n int) {
	t.Helper()
	if len(rows) != n {
		t.Errorf("%s: %d rows for %d plans", name, len(rows), n)
	}
	rank := 0
	for i, r := range rows {
		if i > 0 && ComparePlans(rows[i-1].Plan, r.Plan) > 0 {
			t.Errorf("%s: rows %d and %d out of order", name, i-1, i)
		}
		if r.Eligible != (r.Reason == "") {
			t.Errorf("%s: %s eligible %v with reason %q", name, r.Plan.Rel, r.Eligible, r.Reason)
		}
		if r.Eligible {
			rank++
			if r.Rank != rank {
				t.Errorf("%s: %s rank %d, want %d", name, r.Plan.Rel, r.Rank, rank)
			}
			if !r.Plan.Lane.Ready() {
				t.Errorf("%s: %s eligible in lane %s", name, r.Plan.Rel, r.Plan.Lane)
			}
		} else if r.Rank != 0 {
			t.Errorf("%s: ineligible %s has rank %d", name, r.Plan.Rel, r.Rank)
		}
	}
}

func TestPicksSkip(t *testing.T) {
	s := &Snapshot{Plans: []Plan{mkPlan("features/a.md", 1), mkPlan("features/b.md", 2), mkPlan("bugs/c.md", 3)}}
	rows := Decide(s, midWorker, Options{Now: now})
	got := rels(Picks(rows, map[string]bool{"bugs/c.md": true}))
	if !slices.Equal(got, []string{"features/a.md", "features/b.md"}) {
		t.Errorf("picks with skip: %q", got)
	}
	// Picks points into rows.
	if p := Picks(rows, nil); len(p) == 0 || p[0] != &rows[0] {
		t.Errorf("Picks does not return pointers into rows")
	}
}

func TestDecideRowFields(t *testing.T) {
	lease := Lease{Rel: "features/a.md", AgentID: "w2", ExpiresAt: now - 1}
	s := &Snapshot{
		Plans:  []Plan{mkPlan("features/a.md", 1, "- **Preferred models:** reasoner", dependsOn("b")), mkPlan("drafts/b.md", 1)},
		Leases: []Lease{lease},
	}
	rows := Decide(s, midWorker, Options{Now: now})
	r := rowOf(rows, "features/a.md")
	if r.Fit != FitUnderqualified || r.Deps.Met || r.Lease == nil || r.Lease.AgentID != "w2" || r.Plan != s.PlanAt("features/a.md") {
		t.Errorf("row %+v", r)
	}
	// Deps are judged before fit in the reason.
	if !strings.HasPrefix(r.Reason, "deps UNMET: b (open:drafts)") {
		t.Errorf("reason %q", r.Reason)
	}
	if rows[0].Plan.Lane != Drafts {
		t.Errorf("rows not in lane order: first %s", rows[0].Plan.Rel)
	}
}

// Hand-built headers may lack Priority or Value; they sort as P2 and medium.
func TestComparePlansDefaults(t *testing.T) {
	bare := &Plan{Rel: "features/bare.md", Lane: Features, Name: "bare.md", ModTime: 1}
	p1 := &Plan{Rel: "features/p1.md", Lane: Features, Name: "p1.md", ModTime: 2, Header: Header{Priority: "P1", Value: "medium"}}
	p3 := &Plan{Rel: "features/p3.md", Lane: Features, Name: "p3.md", ModTime: 0, Header: Header{Priority: "P3", Value: "medium"}}
	high := &Plan{Rel: "features/high.md", Lane: Features, Name: "high.md", ModTime: 2, Header: Header{Priority: "P2", Value: "high"}}
	low := &Plan{Rel: "features/low.md", Lane: Features, Name: "low.md", ModTime: 0, Header: Header{Priority: "P2", Value: "low"}}
	for _, c := range []struct {
		a, b *Plan
		want int
	}{
		{p1, bare, -1}, {bare, p3, -1}, {high, bare, -1}, {bare, low, -1}, {bare, bare, 0},
	} {
		if got := ComparePlans(c.a, c.b); got != c.want {
			t.Errorf("ComparePlans(%s, %s) = %d, want %d", c.a.Name, c.b.Name, got, c.want)
		}
	}
}

func TestDecideDeterministic(t *testing.T) {
	var plans []Plan
	lanes := []string{"bugs", "features", "drafts", "in-progress", "completed"}
	prios := []string{"P1", "P2", "P3"}
	values := []string{"high", "medium", "low"}
	for i := 0; i < 60; i++ {
		name := string(rune('a'+i%26)) + strings.Repeat("x", i/26) + ".md"
		if i%7 == 0 {
			name = strings.ToUpper(name[:1]) + name[1:]
		}
		bullets := []string{"- **Priority:** " + prios[i%3], "- **Value:** " + values[(i/3)%3]}
		if i%5 == 0 {
			bullets = append(bullets, dependsOn(string(rune('a'+(i+1)%26))))
		}
		plans = append(plans, mkPlan(lanes[i%len(lanes)]+"/"+name, int64(i%4), bullets...))
	}
	want := Decide(&Snapshot{Plans: slices.Clone(plans)}, midWorker, Options{Now: now})
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 20; trial++ {
		shuffled := slices.Clone(plans)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		got := Decide(&Snapshot{Plans: shuffled}, midWorker, Options{Now: now})
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d rows, want %d", trial, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.Plan.Rel != w.Plan.Rel || g.Eligible != w.Eligible || g.Rank != w.Rank || g.Reason != w.Reason {
				t.Fatalf("trial %d row %d: %s/%v/%d/%q, want %s/%v/%d/%q", trial, i,
					g.Plan.Rel, g.Eligible, g.Rank, g.Reason, w.Plan.Rel, w.Eligible, w.Rank, w.Reason)
			}
		}
	}
}

func TestSnapshotLookups(t *testing.T) {
	s := &Snapshot{
		Plans:  []Plan{mkPlan("features/a.md", 1)},
		Leases: []Lease{{Rel: "features/a.md", AgentID: "w"}},
	}
	if s.PlanAt("features/a.md") != &s.Plans[0] || s.PlanAt("features/b.md") != nil {
		t.Error("PlanAt")
	}
	if s.LeaseFor("features/a.md") != &s.Leases[0] || s.LeaseFor("features/b.md") != nil {
		t.Error("LeaseFor")
	}
}

func TestUnmetList(t *testing.T) {
	d := DepStatus{Unmet: []Unmet{{"a", "open:bugs"}, {"b", "missing"}}}
	if got := UnmetList(d); got != "a (open:bugs), b (missing)" {
		t.Errorf("UnmetList = %q", got)
	}
	if got := UnmetList(DepStatus{Met: true}); got != "" {
		t.Errorf("UnmetList(met) = %q", got)
	}
}
