package model

import (
	"slices"
	"testing"
)

func TestMatchGlob(t *testing.T) {
	cases := []struct {
		pat, path string
		want      bool
	}{
		{"main.go", "main.go", true},
		{"main.go", "cmd/main.go", false},
		{"*.go", "main.go", true},
		{"*.go", "cmd/main.go", false},
		{"cmd/*.go", "cmd/main.go", true},
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/c.go", true},
		{"internal/**", "internal/x/y.go", true},
		{"internal/**", "internal", true},
		{"internal/", "internal/x/y.go", true},
		{"internal/", "internalx/y.go", false},
		{"a/**/z.txt", "a/z.txt", true},
		{"a/**/z.txt", "a/b/c/z.txt", true},
		{"a/**/z.txt", "b/z.txt", false},
		{"a/**/**/**/z", "a/b/z", true},
		{"[ab].go", "a.go", true},
	}
	for _, c := range cases {
		if got := MatchGlob(c.pat, c.path); got != c.want {
			t.Errorf("MatchGlob(%q, %q) = %v, want %v", c.pat, c.path, got, c.want)
		}
	}
}

func TestParseScope(t *testing.T) {
	text := "# Plan\n\n## Steps\n- edit `x`\n\n## Files in scope\n- `cmd/`\n* internal/**/*.go\nREADME.md # the docs\n[bad\n/abs\n\n### Notes\nstill.go\n## After\nother.go\n"
	s, found, warns := ParseScope(text)
	if !found {
		t.Fatal("no scope found")
	}
	want := []string{"cmd/", "internal/**/*.go", "README.md", "still.go"}
	if !slices.Equal(s.Patterns, want) {
		t.Errorf("patterns %q, want %q", s.Patterns, want)
	}
	if len(warns) != 2 || warns[0].Line != 10 || warns[1].Line != 11 {
		t.Errorf("warnings %+v, want lines 10 and 11", warns)
	}
	if _, found, _ := ParseScope("# x\n## Steps\n"); found {
		t.Error("found a scope in a plan without one")
	}
}

func TestViolations(t *testing.T) {
	s := &Scope{Patterns: []string{"cmd/"}, Allowed: []string{"go.sum"}}
	got := s.Violations([]string{"cmd/a.go", "go.sum", "main.go", ".plans/bugs/x.md", "main.go"})
	if want := []string{".plans/bugs/x.md", "main.go"}; !slices.Equal(got, want) {
		t.Errorf("violations %q, want %q", got, want)
	}
	var none *Scope
	if got := none.Violations([]string{"main.go", ".plans/x.md"}); !slices.Equal(got, []string{".plans/x.md"}) {
		t.Errorf("no scope: violations %q, want only .plans/", got)
	}
}

func TestHeaderPlanFirst(t *testing.T) {
	h := ParseHeader("# T\n- **Plan first:** yes\n- **Allowed generated files:** go.sum, `docs/api.md`\n")
	if !h.PlanFirst || !slices.Equal(h.AllowedGenerated, []string{"go.sum", "docs/api.md"}) {
		t.Errorf("header %+v", h)
	}
	if h := ParseHeader("- **Plan first:** maybe\n"); h.PlanFirst || len(h.Warnings) != 1 {
		t.Errorf("maybe: %+v", h)
	}
}
