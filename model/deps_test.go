package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// mkPlan builds a plan at rel (e.g. "features/app.md") whose header is the
// given bullets, parsed as the scanner would.
func mkPlan(rel string, mtime int64, bullets ...string) Plan {
	lane, name, _ := strings.Cut(rel, "/")
	return Plan{
		Rel:     rel,
		Lane:    Lane(lane),
		Name:    name,
		Slug:    SlugOf(name),
		Local:   strings.HasSuffix(name, ".local.md"),
		ModTime: mtime,
		Header:  ParseHeader(planText(bullets...)),
	}
}

func dependsOn(deps string) string { return "- **Depends on:** " + deps }

// depsOf evaluates s and returns each plan's status by rel.
func depsOf(s *Snapshot, h History) map[string]DepStatus {
	out := map[string]DepStatus{}
	for i, st := range NewDepIndex(s).Evaluate(h) {
		out[s.Plans[i].Rel] = st
	}
	return out
}

func unmetString(d DepStatus) string {
	if d.Met {
		if len(d.Unmet) != 0 {
			return "inconsistent: met with unmet " + UnmetList(d)
		}
		return "met"
	}
	return UnmetList(d)
}

func TestDeps(t *testing.T) {
	tests := []struct {
		name  string
		plans []Plan
		want  map[string]string // rel → "met" or UnmetList
	}{
		{
			"TESTS 100: dependency still open",
			[]Plan{mkPlan("features/base.md", 1), mkPlan("features/app.md", 2, dependsOn("base"))},
			map[string]string{"features/app.md": "base (open:features)", "features/base.md": "met"},
		},
		{
			"TESTS 102: completed is met",
			[]Plan{mkPlan("completed/base.md", 1), mkPlan("features/app.md", 2, dependsOn("base"))},
			map[string]string{"features/app.md": "met"},
		},
		{
			"date-prefixed completed meets the bare slug",
			[]Plan{mkPlan("completed/2026-01-02-base.md", 1), mkPlan("features/app.md", 2, dependsOn("base"))},
			map[string]string{"features/app.md": "met"},
		},
		{
			"date-prefixed open plan is open",
			[]Plan{mkPlan("bugs/2026-01-02-base.md", 1), mkPlan("features/app.md", 2, dependsOn("base"))},
			map[string]string{"features/app.md": "base (open:bugs)"},
		},
		{
			"slugs match case-insensitively",
			[]Plan{mkPlan("completed/Base.md", 1), mkPlan("features/app.md", 2, dependsOn("BASE"))},
			map[string]string{"features/app.md": "met"},
		},
		{
			"local plan meets its slug",
			[]Plan{mkPlan("completed/base.local.md", 1), mkPlan("features/app.md", 2, dependsOn("base.local.md"))},
			map[string]string{"features/app.md": "met"},
		},
		{
			"review-needed is open",
			[]Plan{mkPlan("review-needed/base.md", 1), mkPlan("features/app.md", 2, dependsOn("base"))},
			map[string]string{"features/app.md": "base (open:review-needed)"},
		},
		{
			"open beats completed",
			[]Plan{mkPlan("completed/base.md", 1), mkPlan("drafts/base.md", 1), mkPlan("features/app.md", 2, dependsOn("base"))},
			map[string]string{"features/app.md": "base (open:drafts)"},
		},
		{
			"every open lane is open",
			[]Plan{
				mkPlan("drafts/d.md", 1), mkPlan("bugs/b.md", 1), mkPlan("in-progress/i.md", 1),
				mkPlan("ambiguous/a.md", 1), mkPlan("blocked/k.md", 1),
				mkPlan("features/app.md", 2, dependsOn("d, b, i, a, k")),
			},
			map[string]string{"features/app.md": "d (open:drafts), b (open:bugs), i (open:in-progress), a (open:ambiguous), k (open:blocked)"},
		},
		{
			"missing",
			[]Plan{mkPlan("features/app.md", 2, dependsOn("nope"))},
			map[string]string{"features/app.md": "nope (missing)"},
		},
		{
			"some met, some not",
			[]Plan{mkPlan("completed/a.md", 1), mkPlan("features/b.md", 1), mkPlan("features/app.md", 2, dependsOn("a, b, c"))},
			map[string]string{"features/app.md": "b (open:features), c (missing)"},
		},
		{
			"self-dependency",
			[]Plan{mkPlan("features/self.md", 1, dependsOn("self"))},
			map[string]string{"features/self.md": "self (cycle)"},
		},
		{
			"A↔B",
			[]Plan{mkPlan("features/a.md", 1, dependsOn("b")), mkPlan("bugs/b.md", 1, dependsOn("a"))},
			map[string]string{"features/a.md": "b (cycle)", "bugs/b.md": "a (cycle)"},
		},
		{
			"3-cycle, and a plan hanging off it",
			[]Plan{
				mkPlan("features/a.md", 1, dependsOn("b")),
				mkPlan("features/b.md", 1, dependsOn("c")),
				mkPlan("drafts/c.md", 1, dependsOn("a")),
				mkPlan("features/d.md", 1, dependsOn("a, x")),
			},
			map[string]string{
				"features/a.md": "b (cycle)", "features/b.md": "c (cycle)", "drafts/c.md": "a (cycle)",
				"features/d.md": "a (open:features), x (missing)",
			},
		},
		{
			"cycle through the date-prefixed name",
			[]Plan{mkPlan("features/2026-01-01-a.md", 1, dependsOn("b")), mkPlan("features/b.md", 1, dependsOn("a"))},
			map[string]string{"features/2026-01-01-a.md": "b (cycle)", "features/b.md": "a (cycle)"},
		},
		{
			"a completed plan closes no cycle",
			[]Plan{mkPlan("completed/a.md", 1, dependsOn("b")), mkPlan("features/b.md", 1, dependsOn("a"))},
			map[string]string{"features/b.md": "met"},
		},
		{
			"chain A→B→C with C completed",
			[]Plan{
				mkPlan("features/a.md", 1, dependsOn("b")),
				mkPlan("bugs/b.md", 1, dependsOn("c")),
				mkPlan("completed/c.md", 1),
			},
			map[string]string{"features/a.md": "b (open:bugs)", "bugs/b.md": "met"},
		},
		{
			"a plan outside the known lanes neither blocks nor meets",
			[]Plan{
				mkPlan("archive/old.md", 1),
				{Rel: "/elsewhere/x.md", Slug: "x"},
				mkPlan("features/app.md", 2, dependsOn("old, x")),
			},
			map[string]string{"features/app.md": "old (missing), x (missing)"},
		},
		{
			"no dependencies is met",
			[]Plan{mkPlan("features/a.md", 1), mkPlan("features/b.md", 1, dependsOn("none"))},
			map[string]string{"features/a.md": "met", "features/b.md": "met"},
		},
	}
	for _, tt := range tests {
		s := &Snapshot{Plans: tt.plans}
		got := depsOf(s, nil)
		for rel, want := range tt.want {
			if g := unmetString(got[rel]); g != want {
				t.Errorf("%s: %s: %s, want %s", tt.name, rel, g, want)
			}
		}
	}
}

// TESTS 104: the parsed header carries the dependency into the snapshot.
func TestDepsDraftsSummary(t *testing.T) {
	s := &Snapshot{Plans: []Plan{mkPlan("drafts/a.md", 1), mkPlan("features/b.md", 1, dependsOn("a"))}}
	if !slices.Contains(s.PlanAt("features/b.md").Header.DependsOn, "a") {
		t.Fatalf("b depends on %q", s.PlanAt("features/b.md").Header.DependsOn)
	}
	if got := unmetString(depsOf(s, nil)["features/b.md"]); got != "a (open:drafts)" {
		t.Errorf("b: %s", got)
	}
}

func TestDepsHistory(t *testing.T) {
	s := &Snapshot{Plans: []Plan{
		mkPlan("completed/done.md", 1),
		mkPlan("features/open.md", 1),
		mkPlan("features/app.md", 2, dependsOn("done, open, gone, never")),
	}}
	var asked []string
	h := func(slug string) bool {
		asked = append(asked, slug)
		return slug == "gone"
	}
	got := unmetString(depsOf(s, h)["features/app.md"])
	if got != "open (open:features), never (missing)" {
		t.Errorf("app: %s", got)
	}
	slices.Sort(asked)
	if !slices.Equal(asked, []string{"gone", "never"}) {
		t.Errorf("history asked about %q, want only slugs not in the tree", asked)
	}

	// Nothing outside the tree: history is never consulted.
	s = &Snapshot{Plans: []Plan{mkPlan("completed/done.md", 1), mkPlan("features/app.md", 2, dependsOn("done"))}}
	called := false
	st := depsOf(s, func(string) bool { called = true; return false })["features/app.md"]
	if called || !st.Met {
		t.Errorf("called %v, status %+v", called, st)
	}
}

func TestDepKey(t *testing.T) {
	for in, want := range map[string]string{
		"base":              "base",
		"Base":              "base",
		"2026-01-02-base":   "base",
		"2026-01-02-Base":   "base",
		"2026-1-02-base":    "2026-1-02-base",
		"x-2026-01-02-base": "x-2026-01-02-base",
		"2026-01-02-":       "",
	} {
		if got := DepKey(in); got != want {
			t.Errorf("DepKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// chain builds n open plans p0 → p1 → … → p(n-1); closed makes the last one
// depend on p0, else the last one is completed.
func chain(n int, closed bool) *Snapshot {
	plans := make([]Plan, n)
	for i := range plans {
		name := fmt.Sprintf("p%d.md", i)
		p := Plan{Rel: "features/" + name, Lane: Features, Name: name, Slug: SlugOf(name),
			Header: Header{Value: "medium", Priority: "P2", AgentAssignable: true}}
		if i+1 < n {
			p.Header.DependsOn = []string{fmt.Sprintf("p%d", i+1)}
		} else if closed {
			p.Header.DependsOn = []string{"p0"}
		} else {
			p.Lane, p.Rel = Completed, "completed/"+name
		}
		plans[i] = p
	}
	return &Snapshot{Plans: plans}
}

func TestDepsLongChain(t *testing.T) {
	const n = 100_000
	for _, closed := range []bool{false, true} {
		s := chain(n, closed)
		// A recursive walk would overflow the stack here; speed is BenchmarkDecide's job.
		st := NewDepIndex(s).Evaluate(nil)
		for i := 0; i < n; i++ {
			var want string
			switch {
			case closed:
				want = fmt.Sprintf("p%d (cycle)", (i+1)%n)
			case i == n-2:
				want = "met" // depends on the completed last plan
			case i == n-1:
				continue // the completed plan itself
			default:
				want = fmt.Sprintf("p%d (open:features)", i+1)
			}
			if got := unmetString(st[i]); got != want {
				t.Fatalf("closed=%v: p%d: %s, want %s", closed, i, got, want)
			}
		}
	}
}

func TestDepsChainEnd(t *testing.T) {
	s := chain(3, false)
	st := depsOf(s, nil)
	if got := unmetString(st["features/p1.md"]); got != "met" {
		t.Errorf("p1 (depends on completed p2): %s", got)
	}
	if got := unmetString(st["features/p0.md"]); got != "p1 (open:features)" {
		t.Errorf("p0: %s", got)
	}
}

func TestLaneOpen(t *testing.T) {
	for _, l := range Lanes {
		if l.Open() != (l != Completed) {
			t.Errorf("%s.Open() = %v", l, l.Open())
		}
		if l.Ready() != (l == Bugs || l == Features) {
			t.Errorf("%s.Ready() = %v", l, l.Ready())
		}
		if l.Parked() != (l == Ambiguous || l == Blocked) {
			t.Errorf("%s.Parked() = %v", l, l.Parked())
		}
		if got, ok := ParseLane(string(l)); !ok || got != l {
			t.Errorf("ParseLane(%q) = %q, %v", l, got, ok)
		}
	}
	for _, l := range []Lane{"", "archive", "Bugs"} {
		if l.Open() || l.Ready() || l.Parked() {
			t.Errorf("unknown lane %q: open %v ready %v parked %v", l, l.Open(), l.Ready(), l.Parked())
		}
	}
	if _, ok := ParseLane("archive"); ok {
		t.Error("ParseLane(archive) ok")
	}
}
