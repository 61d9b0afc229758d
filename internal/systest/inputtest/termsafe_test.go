package inputtest

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// rawControl reports a control character other than the line breaks and
// tabs an output's own layout uses.
func rawControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e)
	})
}

// An escape sequence in a plan's file name, its Assignee field or a lease's
// agent id never reaches the terminal from --list (stdout or stderr),
// check, watch status or an error line; a tab or line break in a file name
// never breaks a TSV row.
func TestEscapesFromFilesNeverReachTheTerminal(t *testing.T) {
	t.Parallel()
	evil := "\x1b]0;pwned\x07\x1b[2J"
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "features/tab\tname" + evil + ".md"},
		fwtest.Plan{Rel: "features/line\nbreak.md"},
		fwtest.Plan{Rel: "features/person.md", Fields: "Assignee: bob" + evil},
		fwtest.Plan{Rel: "features/taken.md"},
		fwtest.Plan{Rel: "features/broken" + evil + ".md", Fields: "Priority: P9" + evil},
	)
	agent := "w" + evil
	if r := fwtest.Run(t, dir, "work-once", "--slug", "taken", "--agent-id", agent); r.Code != 0 {
		t.Fatalf("claim by an odd agent id: %v", r)
	}
	check := func(what string, r fwtest.Result) {
		t.Helper()
		if rawControl(r.Stdout) || rawControl(r.Stderr) {
			t.Errorf("%s: raw control characters reach the terminal:\nstdout %q\nstderr %q", what, r.Stdout, r.Stderr)
		}
	}
	list := fwtest.Run(t, dir, "work-once", "--list", "--agent-id", "w2")
	check("--list", list)
	rows := strings.Split(strings.TrimSpace(list.Stdout), "\n")
	for _, row := range rows {
		if n := strings.Count(row, "\t"); n != 8 {
			t.Errorf("--list row with %d tabs, not 8: %q", n, row)
		}
	}
	if !strings.Contains(list.Stderr, "agent=w?]0;pwned??[2J") {
		t.Errorf("--list stderr should name the odd agent, made safe:\n%q", list.Stderr)
	}
	check("check", fwtest.Run(t, dir, "check"))
	check("watch status", fwtest.Run(t, dir, "watch", "status", "--project", dir))
	// An error line quoting the lease's holder.
	rel := fwtest.Run(t, dir, "release", "in-progress/taken.md", "--agent-id", "w2")
	if rel.Code == 0 || !strings.Contains(rel.Stderr, "w?]0;pwned") {
		t.Errorf("release of another's plan: %v", rel)
	}
	check("an error line", rel)
}

// Every --json output escapes the C1 controls and bidi overrides that
// encoding/json leaves raw, and still decodes to the very text on disk.
func TestJSONOutputsEscapeWhatATerminalObeys(t *testing.T) {
	t.Parallel()
	evil := "\u009b2J\u202eevil\u0085"
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "features/c1" + evil + ".md", Fields: "Assignee: bob" + evil},
		fwtest.Plan{Rel: "features/taken.md"},
	)
	if r := fwtest.Run(t, dir, "work-once", "--slug", "taken", "--agent-id", "w"+evil); r.Code != 0 {
		t.Fatalf("claim by an odd agent id: %v", r)
	}
	for _, args := range [][]string{
		{"board", "--project", dir, "--json"},
		{"work-once", "--list", "--json", "--agent-id", "w2"},
		{"check", "--json"},
		{"inbox", "--json"},
		{"queue", "list", "--json"},
	} {
		r := fwtest.Run(t, dir, args...)
		if rawControl(r.Stdout) || rawControl(r.Stderr) {
			t.Errorf("%v: raw control characters reach the terminal:\nstdout %q\nstderr %q", args, r.Stdout, r.Stderr)
		}
		if args[0] == "board" && !strings.Contains(r.Stdout, `c1\u009b2J\u202eevil\u0085`) {
			t.Errorf("board --json lost the plan's name: %s", r.Stdout)
		}
	}
}
