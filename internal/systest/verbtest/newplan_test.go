package verbtest

// fleetwatch new: a plan from the template, exit 0 and its path; every bad
// slug, taken slug, empty title or bad lane exit 2 with one line, and
// nothing written.

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/model"
)

// filesOf is every file under dir/.plans with its contents.
func filesOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := filepath.Join(dir, ".plans")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNewWritesAPlan(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/other.md", Fields: "Preferred models: mid"})
	// Set, but stdin is not a terminal: the editor must not run.
	marker := filepath.Join(t.TempDir(), "ran")
	env := []string{"EDITOR=touch " + marker, "VISUAL="}
	r := fwtest.RunEnv(t, dir, env, "new", "fix-login", "--priority", "p1", "--value", "high", "--models", "mid, claude-sonnet", "--depends", "other", "--agent-id", "op-1")
	fwtest.Want(t, r, fwtest.ExitOK)
	path := filepath.Join(dir, ".plans", "drafts", "fix-login.md")
	if strings.TrimSpace(r.Stdout) != path || r.Stderr != "" {
		t.Errorf("stdout %q stderr %q, want the path %s", r.Stdout, r.Stderr, path)
	}
	h := model.ParseHeader(fwtest.ReadRel(t, dir, "drafts/fix-login.md"))
	if h.Title != "Fix login" || h.Priority != "P1" || h.Value != "high" || strings.Join(h.Preferred, ",") != "mid,claude-sonnet" ||
		strings.Join(h.DependsOn, ",") != "other" || !h.HasDoneWhen {
		t.Errorf("header %+v", h)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the editor ran with stdin not a terminal")
	}
	ev := fwtest.EventsOf(t, dir)
	if len(ev) != 1 || ev[0]["event"] != "create" || ev[0]["to"] != "drafts/fix-login.md" || ev[0]["agent_id"] != "op-1" {
		t.Errorf("events %v", ev)
	}
	r = fwtest.Run(t, dir, "new", "mine", "--local", "--title", "My own", "--lane", "features", "--models", "mid", "--no-edit", "--goal", "Mine", "--done-when", "done")
	fwtest.Want(t, r, fwtest.ExitOK)
	if h := model.ParseHeader(fwtest.ReadRel(t, dir, "features/mine.local.md")); h.Title != "My own" {
		t.Errorf("local plan header %+v", h)
	}
	// Warnings for Depends on are warnings: written, exit 0.
	r = fwtest.Run(t, dir, "new", "later", "--depends", "ghost,later")
	fwtest.Want(t, r, fwtest.ExitOK)
	if !strings.Contains(r.Stderr, "depends on ghost, which names no plan") || !strings.Contains(r.Stderr, "later, which would make a dependency cycle") {
		t.Errorf("stderr %q", r.Stderr)
	}
}

func TestNewRefusesAndWritesNothing(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/taken.md", Fields: "Preferred models: mid"}, fwtest.Plan{Rel: "completed/2025-03-04-shipped.md"})
	cases := []struct {
		args  []string
		names []string // what the one line must name
	}{
		{[]string{"taken"}, []string{"taken", "features/taken.md"}},
		{[]string{"shipped", "--lane", "bugs", "--models", "mid"}, []string{"completed/2025-03-04-shipped.md"}},
		{[]string{"a/b"}, []string{"bad slug", "path"}},
		{[]string{".hidden"}, []string{"bad slug"}},
		{[]string{"x.md"}, []string{"bad slug", ".md"}},
		{[]string{"two words"}, []string{"bad slug", "spaces"}},
		{[]string{""}, []string{"no slug"}},
		{[]string{"x", "--title", ""}, []string{"empty title"}},
		{[]string{"x", "--lane", "in-progress"}, []string{"drafts, bugs or features", "in-progress"}},
		{[]string{"x", "--lane", "nowhere"}, []string{"--lane", "nowhere"}},
		{[]string{"x", "--lane", "bugs"}, []string{"bugs/x.md", "Preferred models"}},
		{[]string{"x", "--lane", "bugs", "--models", "mid"}, []string{"bugs/x.md", "--goal", "--done-when"}},
		{[]string{"x", "--value", "huge"}, []string{"value", "huge"}},
		{[]string{"x", "--priority", "P7"}, []string{"priority", "P7"}},
		{[]string{"x", "y"}, []string{"exactly one slug"}},
		{nil, []string{"exactly one slug"}},
	}
	before := filesOf(t, dir)
	for _, c := range cases {
		r := fwtest.Run(t, dir, append([]string{"new"}, c.args...)...)
		fwtest.OneLineError(t, r, c.names...)
		if r.Stdout != "" {
			t.Errorf("new %q: stdout %q", c.args, r.Stdout)
		}
		after := filesOf(t, dir)
		if len(after) != len(before) {
			t.Fatalf("new %q wrote something: %v", c.args, after)
		}
		for k, v := range before {
			if after[k] != v {
				t.Fatalf("new %q changed %s", c.args, k)
			}
		}
	}
	// Outside a project: the one line names the missing tree.
	fwtest.OneLineError(t, fwtest.Run(t, t.TempDir(), "new", "x", "--root", t.TempDir()), ".plans")
}
