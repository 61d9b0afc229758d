package model

import (
	"strings"
	"testing"
)

// A Goal or Done when section that is there but holds nothing (a bare
// bullet, an empty checkbox, a comment) is blank, named with its heading's
// line; a sub-heading or any word fills it; a plan without the sections is
// not blank (anchor's plans need not have them).
func TestBlankSections(t *testing.T) {
	cases := []struct {
		name, text string
		line       int
		says       string
	}{
		{"the built-in template", NewPlan{Slug: "a", Title: "A"}.Normalized().Render(BuiltinTemplate()), 8, "## Goal and ## Done when sections are empty"},
		{"done when a bare dash", "# T\n\n## Goal\nFix it.\n\n## Done when\n-\n", 6, "## Done when section is empty"},
		{"a checkbox and a comment", "# T\n## Goal\n<!-- say it -->\n## Acceptance\n- [ ]\n1.\n", 2, "## Goal and ## Acceptance sections are empty"},
		{"filled", "# T\n## Goal\nFix it.\n## Done when\n- it works\n", 0, ""},
		{"a sub-heading is content", "# T\n## Goal\n### Part one\n## Done when\n- [x] works\n", 0, ""},
		{"no such sections", "# T\n- **Value:** high\n", 0, ""},
		{"filled by new's flags", NewPlan{Slug: "a", Title: "A", Goal: "Log in works", DoneWhen: []string{"the test passes"}}.Normalized().Render(BuiltinTemplate()), 0, ""},
	}
	for _, c := range cases {
		line, why := ParseHeader(c.text).BlankProblem()
		if line != c.line || !strings.Contains(why, c.says) || (c.says == "") != (why == "") {
			t.Errorf("%s: BlankProblem = %d, %q; want %d, %q\n%s", c.name, line, why, c.line, c.says, c.text)
		}
	}
}

// new's --goal and --done-when fill the template's sections, or add them
// to a template that has none; the rest of the template stays.
func TestRenderFillsGoalAndDoneWhen(t *testing.T) {
	n := NewPlan{Slug: "a", Title: "A", Goal: "Log in works", DoneWhen: []string{"one", "two"}}.Normalized()
	got := n.Render(BuiltinTemplate())
	if !strings.Contains(got, "## Goal\n\nLog in works\n\n## Context\n") || !strings.HasSuffix(got, "## Done when\n\n- one\n- two\n") || !strings.Contains(got, "## Steps\n\n1.\n") {
		t.Errorf("built-in template:\n%s", got)
	}
	got = n.Render("# {{title}}\n\n- **Value:** low\n")
	if !strings.HasSuffix(got, "- **Value:** medium\n\n## Goal\n\nLog in works\n\n## Done when\n\n- one\n- two\n") {
		t.Errorf("template without sections:\n%s", got)
	}
	if err := (NewPlan{Slug: "a", Title: "A", Goal: "x\ny"}).Normalized().Check(); err == nil {
		t.Error("a goal with a line break is taken")
	}
}
