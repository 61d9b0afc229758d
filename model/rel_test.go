package model

import "testing"

func TestParseRel(t *testing.T) {
	for _, bad := range []string{"", "features", "features/", "nolane/a.md", "features/a.txt", "features/README.md", "features/x/a.md", `features/a\b.md`, "features/..", "/features/a.md"} {
		if _, err := ParseRel(bad); err == nil {
			t.Errorf("ParseRel(%q) accepted", bad)
		}
	}
	r, err := ParseRel("in-progress/fix-login.local.md")
	if err != nil {
		t.Fatal(err)
	}
	if r.Lane() != InProgress || r.Name() != "fix-login.local.md" || r.Slug() != "fix-login" || r.In(Bugs) != "bugs/fix-login.local.md" {
		t.Errorf("%q: lane %q name %q slug %q", r, r.Lane(), r.Name(), r.Slug())
	}
	if RelOf(Features, "a.md") != "features/a.md" {
		t.Error("RelOf")
	}
}
