package verbtest

// Every CLI table sanitises text as board does: a plan name, an agent id
// or a note holding an OSC 52 escape (which writes the operator's
// clipboard) or a bidi override never reaches the terminal raw.

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

const (
	osc52    = "\x1b]52;c;cm0gLXJmIH4K\x07"
	override = "\u202e"
)

// raw fails t when out holds an escape, a C1 control or a bidi override.
func raw(t *testing.T, what, out string) {
	t.Helper()
	if strings.ContainsAny(out, "\x1b\x07\u009b\u202e\u2066") {
		t.Errorf("%s prints raw control text: %q", what, out)
	}
}

func TestTablesSanitiseText(t *testing.T) {
	t.Parallel()
	slug := "evil" + osc52 + override + "gnp"
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "bugs/" + slug + ".md"})
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-commit")
	agent := "w" + osc52 + override
	r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", agent)
	fwtest.Want(t, r, fwtest.ExitOK)
	if !fwtest.Exists(dir, "review-needed/"+slug+".md") {
		t.Fatalf("the plan was not worked: %v", r)
	}
	// The approver's name is recorded as given.
	r = fwtest.RunEnv(t, dir, []string{"USER=op" + osc52 + override}, "review", slug, "--approve")
	fwtest.Want(t, r, fwtest.ExitOK)
	raw(t, "review --approve", r.Stdout+r.Stderr)
	for _, args := range [][]string{{"queue", "list"}, {"worktree", "list"}} {
		r := fwtest.Run(t, dir, args...)
		fwtest.Want(t, r, fwtest.ExitOK)
		raw(t, strings.Join(args, " "), r.Stdout+r.Stderr)
		if !strings.Contains(r.Stdout, "?]52;c;") {
			t.Errorf("%v does not show the sanitised name: %v", args, r)
		}
	}
}
