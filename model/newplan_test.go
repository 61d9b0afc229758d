package model

import (
	"reflect"
	"strings"
	"testing"
)

func TestCheckSlug(t *testing.T) {
	good := []string{"fix-login", "a", "2026-01-02-dated", "x_y.z", "ünïcode"}
	for _, s := range good {
		if err := CheckSlug(s); err != nil {
			t.Errorf("CheckSlug(%q) = %v, want ok", s, err)
		}
	}
	bad := []string{"", "a/b", `a\b`, ".hidden", "a.md", "A.MD", "a.local", "a b", "a\tb", "a\x1bb", "README", strings.Repeat("x", 201)}
	for _, s := range bad {
		err := CheckSlug(s)
		if err == nil {
			t.Errorf("CheckSlug(%q) = nil, want a refusal", s)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("CheckSlug(%q): more than one line: %q", s, err)
		}
	}
}

func TestNewPlanCheck(t *testing.T) {
	base := NewPlan{Slug: "a", Title: "A plan"}
	cases := []struct {
		name string
		edit func(*NewPlan)
		want string // in the error; "" means ok
	}{
		{"defaults", func(*NewPlan) {}, ""},
		{"ready lane", func(n *NewPlan) { n.Lane = Features }, ""},
		{"priority spelled 1", func(n *NewPlan) { n.Priority = "1" }, ""},
		{"priority p3", func(n *NewPlan) { n.Priority = "p3" }, ""},
		{"empty title", func(n *NewPlan) { n.Title = "  " }, "empty title"},
		{"bad lane", func(n *NewPlan) { n.Lane = InProgress }, "lane"},
		{"completed lane", func(n *NewPlan) { n.Lane = Completed }, "lane"},
		{"bad value", func(n *NewPlan) { n.Value = "huge" }, "value"},
		{"bad priority", func(n *NewPlan) { n.Priority = "P9" }, "priority"},
		{"priority with a note", func(n *NewPlan) { n.Priority = "P1 soon" }, "priority"},
		{"comment in models", func(n *NewPlan) { n.Preferred = []string{"mid #x"} }, "preferred models"},
		{"control in title", func(n *NewPlan) { n.Title = "a\x07b" }, "title"},
	}
	for _, c := range cases {
		n := base
		c.edit(&n)
		err := n.Normalized().Check()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one about %q", c.name, err, c.want)
		}
	}
}

// What Render writes, ParseHeader reads back as the same fields, from the
// built-in template and from templates shaped like anchor's.
func TestRenderParsesBack(t *testing.T) {
	templates := map[string]string{
		"builtin": BuiltinTemplate(),
		"anchor": "# Plan: <title>\n\n- **Value:** high | medium | low\n- **Priority:** P1 | P2 | P3\n" +
			"- **Preferred models:** small, mid, reasoner, frontier\n- **Depends on:** none   # or other-slug\n\n" +
			"## Goal\n\n## Steps\n\n## Done when\n",
		"no header":       "## Goal\n\nSay it.\n\n## Done when\n- {{slug}} works\n",
		"title only":      "# {{title}}\n\n## Done when\n",
		"crlf, indented":  "# T\r\n\r\n  - **value:** low\r\n\r\n## Done when\r\n",
		"second is dead":  "# T\n- **Value:** high\n- **Value:** low\n",
		"assignee stays":  "# T\n- **Assignee:** agents\n",
		"heading in body": "Intro line\n# Later heading\n",
	}
	plans := []NewPlan{
		{Slug: "fix-login", Title: "Fix the login", Value: "high", Priority: "p1", Preferred: []string{"mid", " claude-sonnet "}, DependsOn: []string{"a", "b.md"}},
		{Slug: "x", Title: "X", Lane: Features},
	}
	for name, tmpl := range templates {
		for _, n := range plans {
			n = n.Normalized()
			text := n.Render(tmpl)
			h := ParseHeader(text)
			wantDeps := n.DependsOn
			if h.Title != n.Title || h.Value != n.Value || h.Priority != n.Priority ||
				!reflect.DeepEqual(h.Preferred, lower(n.Preferred)) || !reflect.DeepEqual(h.DependsOn, wantDeps) {
				t.Errorf("%s: %+v\nwrote:\n%s\nreads back %+v", name, n, text, h)
			}
			if !h.AgentAssignable {
				t.Errorf("%s: the plan reads as a person's:\n%s", name, text)
			}
			if strings.Contains(text, "{{") {
				t.Errorf("%s: a placeholder is left:\n%s", name, text)
			}
		}
	}
	if h := ParseHeader(plans[1].Normalized().Render(BuiltinTemplate())); !h.HasDoneWhen {
		t.Error("the built-in template has no Done when section")
	}
}

func lower(in []string) []string {
	var out []string
	for _, s := range in {
		out = append(out, strings.ToLower(s))
	}
	return out
}

func TestProposedDeps(t *testing.T) {
	mk := func(lane Lane, slug string, deps ...string) Plan {
		return Plan{Rel: string(lane) + "/" + slug + ".md", Lane: lane, Slug: slug, Header: Header{DependsOn: deps}}
	}
	s := &Snapshot{Plans: []Plan{
		mk(Features, "a", "b"),
		mk(Bugs, "b", "new"), // already waits for the plan being written
		mk(Drafts, "c"),
		mk(Completed, "2025-01-01-done", "new"), // completed: no cycle through it
		mk(Features, "d", "e"),
		mk(Features, "e", "d"), // a cycle that does not reach new
	}}
	inGit := func(slug string) bool { return slug == "old" }
	got := ProposedDeps(s, "new", []string{"a", "c", "done", "ghost", "old", "new", "d", " `b` "}, inGit)
	want := []DepProblem{{"a", "cycle"}, {"ghost", "unknown"}, {"new", "cycle"}, {"b", "cycle"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ProposedDeps = %v, want %v", got, want)
	}
	if got := ProposedDeps(s, "new", nil, nil); len(got) != 0 {
		t.Errorf("no deps: %v", got)
	}
	if rel := SlugTaken(s, "DONE"); rel != "completed/2025-01-01-done.md" {
		t.Errorf("SlugTaken(DONE) = %q", rel)
	}
	if rel := SlugTaken(s, "zzz"); rel != "" {
		t.Errorf("SlugTaken(zzz) = %q", rel)
	}
}

// The form judges Depends on at every key typed in it: at 10,000 plans
// this must stay well inside a frame.
func BenchmarkProposedDeps10k(b *testing.B) {
	s := &Snapshot{}
	for i := range 10000 {
		slug := "plan-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + itoa(i)
		dep := "plan-" + strings.Repeat("x", (i+1)%7) + string(rune('a'+(i+1)%26)) + itoa(i+1)
		s.Plans = append(s.Plans, Plan{Rel: "features/" + slug + ".md", Lane: Features, Slug: slug, Header: Header{DependsOn: []string{dep}}})
	}
	deps := []string{s.Plans[0].Slug, "ghost", s.Plans[5000].Slug}
	ix := NewDepIndex(s)
	b.ResetTimer()
	for range b.N {
		ix.Proposed("new-one", deps, nil)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}
