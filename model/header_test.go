package model

import (
	"slices"
	"strings"
	"testing"
)

// planText builds a plan file shaped like anchor's test helpers: a title,
// the given header bullets, then Goal / Steps / Done when sections.
func planText(bullets ...string) string {
	var b strings.Builder
	b.WriteString("# Plan: t\n\n")
	for _, l := range bullets {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n## Goal\n\nDo it.\n\n## Steps\n\n- one\n\n## Done when\n\n- done\n")
	return b.String()
}

func TestParseHeaderDefaults(t *testing.T) {
	h := ParseHeader("")
	if h.Priority != "P2" || h.Value != "medium" || !h.AgentAssignable {
		t.Errorf("empty text: got priority %q value %q assignable %v, want P2 medium true", h.Priority, h.Value, h.AgentAssignable)
	}
	if h.Title != "" || h.Assignee != "" || h.AssigneeRaw != "" || h.PreferredRaw != "" ||
		h.Preferred != nil || h.DependsOn != nil || h.HasDoneWhen || h.Warnings != nil {
		t.Errorf("empty text: got %+v, want zero fields", h)
	}
}

func TestParsePriority(t *testing.T) {
	tests := []struct {
		line string
		want string
	}{
		{"- **Priority:** P1", "P1"},                // TESTS 19
		{"- **priority:** p3", "P3"},                // TESTS 20
		{"- **Priority:** 2", "P2"},                 // TESTS 21
		{"- **Priority:** P1 — foundational", "P1"}, // TESTS 22
		{"- **Priority:** `P1`", "P1"},              // TESTS 23
		{"", "P2"},                                  // TESTS 24: absent
		{"- **Priority:** banana", "P2"},            // TESTS 25
		{"- **Priority:** p1", "P1"},
		{"- **Priority:** 1", "P1"},
		{"- **Priority:** 3", "P3"},
		{"- **Priority:** P1.", "P1"},
		{"- **Priority:** P1—x", "P1"},
		{"- **Priority:** 12", "P1"},
		{"- **Priority:** P4", "P2"},
		{"- **Priority:** P0", "P2"},
		{"- **Priority:** **P1**", "P2"},
		{"- **Priority:** P 1", "P2"},
		{"- **PRIORITY:** P3", "P3"},
		{"  - **Priority:** P3", "P3"}, // indented bullet
		{"-**Priority:** P3", "P3"},    // no space after -
		{"- **Priority:** P3 # was P1", "P3"},
		{"- **Priority:**", "P2"},         // empty is absent
		{"- **Priority:**   # tbd", "P2"}, // comment only is empty
		{"* **Priority:** P1", "P2"},      // * bullet not read
		{"**Priority:** P1", "P2"},        // no bullet
		{"- **Priority**: P1", "P2"},      // colon outside the bold
	}
	for _, tt := range tests {
		if got := ParseHeader(planText(tt.line)).Priority; got != tt.want {
			t.Errorf("%q: priority %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestParseValue(t *testing.T) {
	tests := []struct {
		line string
		want string
	}{
		{"- **Value:** high", "high"},
		{"- **Value:** medium", "medium"},
		{"- **Value:** low", "low"},
		{"- **value:** HIGH", "high"},
		{"- **Value:** high,", "high"},
		{"- **Value:** high — ships the demo", "high"},
		{"- **Value:** `high`", "medium"},
		{"- **Value:** huge", "medium"},
		{"- **Value:** very high", "medium"},
		{"- **Value:**", "medium"},
		{"", "medium"},
		{"- **Value:** low # for now", "low"},
		{"* **Value:** high", "medium"},
		{"**Value:** high", "medium"},
		{"- **Value**: high", "medium"},
	}
	for _, tt := range tests {
		if got := ParseHeader(planText(tt.line)).Value; got != tt.want {
			t.Errorf("%q: value %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestParseAssignee(t *testing.T) {
	tests := []struct {
		value      string // "" leaves the line out
		identity   string
		assignable bool
	}{
		{"", "", true}, // TESTS 39
		// TESTS 40
		{"ai", "ai", true},
		{"AI", "AI", true},
		{"agent", "agent", true},
		{"unassigned", "unassigned", true},
		{"none", "none", true},
		{"-", "-", true},
		{"any", "any", true},
		{"agents", "agents", true},
		{"bot", "bot", true},
		{"llm", "llm", true},
		{"auto", "auto", true},
		{"anyone", "anyone", true},
		{"`ai`", "ai", true},
		{"ai — any agent may take it", "ai", true},
		{"none (open to all)", "none", true},
		{"agent, please", "agent", true},
		{"ai # default", "ai", true},
		// TESTS 41
		{"human", "human", false},
		{"Alice", "Alice", false},
		{"@bob", "@bob", false},
		{"ops@corp.com", "ops@corp.com", false},
		{"human — signs the release", "human", false},
		{"carol (needs badge access)", "carol", false},
		{"carol(needs badge access)", "carol", false},
		// TESTS 45, 46, 48
		{"alice@corp.com — owns migration", "alice@corp.com", false},
		{"alice — owns it", "alice", false},
		{"alice – owns it", "alice", false},
		{"alice - owns it", "alice", false},
		{"alice, bob", "alice", false},
		{"mary-jane", "mary-jane", false}, // a hyphen inside a name is not a note
		// not split on spaces
		{"AI agent", "AI agent", false},
		{"any agent", "any agent", false},
		// all note, no identity: present but not a listed identity
		{"(tbd)", "", false},
	}
	for _, tt := range tests {
		var h Header
		if tt.value == "" {
			h = ParseHeader(planText("- **Value:** medium"))
		} else {
			h = ParseHeader(planText("- **Value:** medium", "- **Assignee:** "+tt.value))
		}
		if h.Assignee != tt.identity || h.AgentAssignable != tt.assignable {
			t.Errorf("Assignee %q: identity %q assignable %v, want %q %v", tt.value, h.Assignee, h.AgentAssignable, tt.identity, tt.assignable)
		}
	}
	h := ParseHeader(planText("- **Assignee:** alice@corp.com — owns migration"))
	if !strings.HasPrefix(h.AssigneeRaw, "alice@corp.com") || h.AssigneeRaw != "alice@corp.com — owns migration" {
		t.Errorf("AssigneeRaw = %q", h.AssigneeRaw)
	}
}

// An empty field is absent: it never reads the next line (anchor's bug).
func TestEmptyFieldIsAbsent(t *testing.T) {
	h := ParseHeader("# Plan: t\n\n- **Value:** high\n- **Depends on:**\n\n## Goal\n\nx\n")
	if h.DependsOn != nil {
		t.Errorf("empty Depends on then ## Goal: deps %q, want none", h.DependsOn)
	}
	h = ParseHeader("# Plan: t\n\n- **Assignee:**\n- **Value:** high\n")
	if !h.AgentAssignable || h.Assignee != "" || h.AssigneeRaw != "" {
		t.Errorf("empty Assignee then a bullet: assignable %v identity %q raw %q, want agent-assignable", h.AgentAssignable, h.Assignee, h.AssigneeRaw)
	}
	if h.Value != "high" {
		t.Errorf("the bullet after an empty field must still be read: value %q", h.Value)
	}
	h = ParseHeader("- **Preferred models:**\n- **Value:** low\n")
	if h.Preferred != nil || h.PreferredRaw != "" {
		t.Errorf("empty Preferred: %q %q", h.Preferred, h.PreferredRaw)
	}
	// An empty first occurrence does not hide a later one.
	h = ParseHeader("- **Priority:**\n- **Priority:** P1\n")
	if h.Priority != "P1" {
		t.Errorf("empty then P1: %q", h.Priority)
	}
}

func TestFirstMatchWins(t *testing.T) {
	h := ParseHeader(planText(
		"- **Value:** low",
		"- **Priority:** P3",
		"- **Assignee:** ai",
		"- **Preferred models:** small",
		"- **Depends on:** a",
		"- **value:** high",
		"- **Priority:** P1",
		"- **Assignee:** bob",
		"- **Preferred models:** frontier",
		"- **Depends on:** b",
	) + "\n- **Value:** high\n")
	if h.Value != "low" || h.Priority != "P3" || h.Assignee != "ai" || !slices.Equal(h.Preferred, []string{"small"}) || !slices.Equal(h.DependsOn, []string{"a"}) {
		t.Errorf("got %+v", h)
	}
	// A match in the body counts when the header lacks the field.
	h = ParseHeader("# T\n\n## Goal\n\ntext\n\n- **Value:** high\n")
	if h.Value != "high" {
		t.Errorf("body match: value %q", h.Value)
	}
}

func TestComments(t *testing.T) {
	tests := []struct {
		line string
		deps []string
	}{
		{"- **Depends on:** other-slug   # or none", []string{"other-slug"}},
		{"- **Depends on:** a, b # c", []string{"a", "b"}},
		{"- **Depends on:** # none yet", nil},
		{"- **Depends on:**\t# none yet", nil},
		{"- **Depends on:** issue#12", []string{"issue#12"}}, // no space before #
	}
	for _, tt := range tests {
		if got := ParseHeader(tt.line + "\n").DependsOn; !slices.Equal(got, tt.deps) {
			t.Errorf("%q: deps %q, want %q", tt.line, got, tt.deps)
		}
	}
	h := ParseHeader("- **Preferred models:** mid # or reasoner\n")
	if !slices.Equal(h.Preferred, []string{"mid"}) || h.PreferredRaw != "mid" {
		t.Errorf("Preferred with comment: %q raw %q", h.Preferred, h.PreferredRaw)
	}
	h = ParseHeader("- **Preferred models:** C# expert\n")
	if !slices.Equal(h.Preferred, []string{"c# expert"}) {
		t.Errorf("C# is not a comment: %q", h.Preferred)
	}
}

func TestPreferred(t *testing.T) {
	tests := []struct {
		value string
		want  []string
	}{
		{"mid", []string{"mid"}},
		{"Mid, Reasoner", []string{"mid", "reasoner"}},
		{" small ,, Claude Sonnet 5 ,", []string{"small", "claude sonnet 5"}},
		{"Qwen/Qwen3-32B-FP8", []string{"qwen/qwen3-32b-fp8"}},
	}
	for _, tt := range tests {
		h := ParseHeader("- **Preferred models:** " + tt.value + "\n")
		if !slices.Equal(h.Preferred, tt.want) {
			t.Errorf("%q: %q, want %q", tt.value, h.Preferred, tt.want)
		}
		if h.PreferredRaw != strings.TrimSpace(tt.value) {
			t.Errorf("%q: raw %q", tt.value, h.PreferredRaw)
		}
	}
}

func TestCRLF(t *testing.T) {
	text := strings.ReplaceAll(planText(
		"- **Value:** high",
		"- **Priority:** P1",
		"- **Assignee:** alice — owns it",
		"- **Preferred models:** mid, reasoner",
		"- **Depends on:** base.md",
	)+"\n## Depends on (detail)\n\n- `extra` — later\n", "\n", "\r\n")
	h := ParseHeader(text)
	if h.Title != "Plan: t" || h.Value != "high" || h.Priority != "P1" || h.Assignee != "alice" ||
		!slices.Equal(h.Preferred, []string{"mid", "reasoner"}) || h.PreferredRaw != "mid, reasoner" ||
		!slices.Equal(h.DependsOn, []string{"base", "extra"}) || !h.HasDoneWhen {
		t.Errorf("CRLF: got %+v", h)
	}
	for _, w := range h.Warnings {
		t.Errorf("CRLF: unexpected warning %+v", w)
	}
}

// A lone \r ends a line too (old Mac files), as in Python's universal newlines.
func TestLoneCR(t *testing.T) {
	h := ParseHeader("# T\r\r- **Value:** low\r* **Priority:** P1\r\n- **Depends on:** a\r## Depends on\r- b\r")
	if h.Title != "T" || h.Value != "low" || !slices.Equal(h.DependsOn, []string{"a", "b"}) {
		t.Errorf("lone CR: %+v", h)
	}
	if len(h.Warnings) != 1 || h.Warnings[0].Line != 4 {
		t.Errorf("lone CR warnings: %+v, want one on line 4", h.Warnings)
	}
}

func TestTitle(t *testing.T) {
	tests := []struct {
		text, want string
	}{
		{"# Plan: fix login\n", "Plan: fix login"},
		{"intro\n\n# First  \n# Second\n", "First"},
		{"## Not a title\n#NoSpace\n# Real\n", "Real"},
		{"no heading\n", ""},
		{"  # indented is not a title\n", ""},
	}
	for _, tt := range tests {
		if got := ParseHeader(tt.text).Title; got != tt.want {
			t.Errorf("%q: title %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestDependsOnHeader(t *testing.T) {
	tests := []struct {
		value string
		want  []string
	}{
		{"none", nil}, // TESTS 99
		{"n/a", nil},  // TESTS 99
		{"None", nil},
		{"N/A", nil},
		{"-", nil},
		{"nil", nil},
		{"null", nil},
		{"`none`", nil},
		{"base", []string{"base"}},
		{"a, b , c", []string{"a", "b", "c"}},
		{"none, base", []string{"base"}},
		{"foo, `bar`", []string{"foo", "bar"}},
		{"base — needs the schema", []string{"base"}},
		{"base – needs the schema", []string{"base"}},
		{"base - needs the schema", []string{"base"}},
		{"base (soft)", []string{"base"}},
		{"f(x)", []string{"f(x)"}},
		{"fix-login", []string{"fix-login"}},
		{"../completed/base.md", []string{"base"}},
		{".plans/features/app.local.md", []string{"app"}},
		{"base.md", []string{"base"}},
		{"base.local.md", []string{"base"}},
		{"features/base", []string{"base"}},
		{"`features/base.md` — first", []string{"base"}},
		{"a b", []string{"a b"}},
		{"features / base .md", []string{"base"}},
		{"x/", nil},
		{"Base, base, BASE", []string{"Base"}},
		{"2026-01-02-base", []string{"2026-01-02-base"}},
	}
	for _, tt := range tests {
		got := ParseHeader("- **Depends on:** " + tt.value + "\n").DependsOn
		if !slices.Equal(got, tt.want) {
			t.Errorf("Depends on %q: %q, want %q", tt.value, got, tt.want)
		}
	}
}

func TestDependsOnSection(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{
			"TESTS 98",
			"# Plan\n\n- **Depends on:** foo, `bar`\n\n## Depends on (detail)\n\n- `baz` — needs API\n- none should not appear as a slug\n\n## Goal\n",
			[]string{"foo", "bar", "baz"},
		},
		{
			"plain heading, any indent, * ignored",
			"## Depends on\n- a\n  - b\n\t- `c`\n* d\n-e\n## Goal\n- f\n",
			[]string{"a", "b", "c", "e"},
		},
		{
			"### does not end the section",
			"## Depends on\n- a\n### Why\n- b\n## Steps\n- c\n",
			[]string{"a", "b"},
		},
		{
			"heading case-insensitive, dedup case-insensitive with header",
			"- **Depends on:** Base\n## DEPENDS ON (detail)\n- base — again\n- other/path.md\n- `x.local.md`\n",
			[]string{"Base", "path", "x"},
		},
		{
			"first token only",
			"## Depends on\n- fix-login.v2/part after words\n- [link](x.md)\n- ---\n",
			[]string{"part"},
		},
		{
			"bullets outside the section are not deps",
			"## Goal\n- a\n## Steps\n- b\n",
			nil,
		},
		{
			"section then another Depends on section",
			"## Depends on\n- a\n## Goal\n- g\n## Depends on (more)\n- b\n",
			[]string{"a", "b"},
		},
	}
	for _, tt := range tests {
		if got := ParseHeader(tt.text).DependsOn; !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestHasDoneWhen(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"## Done when\n- x\n", true},
		{"## done WHEN\n", true},
		{"## Acceptance criteria\n", true},
		{"### Acceptance\n", true},
		{"## Goal\n", false},
		{"Done when it works\n", false},
		{"# Done when\n", false},
	}
	for _, tt := range tests {
		if got := ParseHeader(tt.text).HasDoneWhen; got != tt.want {
			t.Errorf("%q: HasDoneWhen %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestHeaderWarnings(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		lines []int  // warned lines, in order
		sub   string // a substring of the first warning
	}{
		{"normal header", planText("- **Value:** high", "- **Priority:** P1", "- **Assignee:** ai", "- **Preferred models:** mid", "- **Depends on:** none", "- **Slug:** t"), nil, ""},
		{"slug is not warned", "- **Slug:** x\n", nil, ""},
		{"* bullet", "# T\n\n* **Value:** high\n", []int{3}, "bullet"},
		{"+ bullet", "# T\n+ **Priority:** P1\n", []int{2}, "bullet"},
		{"no bullet", "# T\n\n\n**Value:** high\n", []int{4}, "bullet"},
		{"colon outside bold", "- **Value**: high\n", []int{1}, "colon"},
		{"bad priority", "# T\r\n\r\n- **Priority:** banana\r\n", []int{3}, "banana"},
		{"bad value", "# T\n- **Value:** huge\n", []int{2}, "huge"},
		{"several", "# T\n* **Value:** high\n**Priority:** P1\n- **Assignee**: bob\n- **Priority:** P9\n", []int{2, 3, 4, 5}, ""},
		{"unknown keys are not warned", "* **Owner:** bob\n**Note:** x\n- **Foo**: y\n", nil, ""},
		{"* bullet in Depends on section", "## Depends on\n- a\n* b\n", []int{3}, "bullet"},
	}
	for _, tt := range tests {
		h := ParseHeader(tt.text)
		var lines []int
		for _, w := range h.Warnings {
			lines = append(lines, w.Line)
			if w.Message == "" {
				t.Errorf("%s: empty warning message", tt.name)
			}
		}
		if !slices.Equal(lines, tt.lines) {
			t.Errorf("%s: warned lines %v, want %v (%+v)", tt.name, lines, tt.lines, h.Warnings)
			continue
		}
		if tt.sub != "" && !strings.Contains(h.Warnings[0].Message, tt.sub) {
			t.Errorf("%s: warning %q lacks %q", tt.name, h.Warnings[0].Message, tt.sub)
		}
	}
}

func TestSlugOf(t *testing.T) {
	for name, want := range map[string]string{
		"foo.md":          "foo",
		"foo.local.md":    "foo",
		"foo":             "foo",
		".hidden.md":      ".hidden",
		"a.b.md":          "a.b",
		"x.local.md.md":   "x.local.md",
		"2026-01-02-x.md": "2026-01-02-x",
	} {
		if got := SlugOf(name); got != want {
			t.Errorf("SlugOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestBudgetHeader(t *testing.T) {
	h := ParseHeader("# A\n\n- **Budget:** 2M tokens, $5 # the export is big\n")
	if h.Budget.Tokens != 2_000_000 || h.Budget.USD != 5 || len(h.Warnings) != 0 {
		t.Errorf("%+v %v", h.Budget, h.Warnings)
	}
	h = ParseHeader("# A\n\n- **Budget:** lots\n")
	if !h.Budget.None() || len(h.Warnings) != 1 || !strings.Contains(h.Warnings[0].Message, "budget `lots`") {
		t.Errorf("%+v %v", h.Budget, h.Warnings)
	}
}
