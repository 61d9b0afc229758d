package inputtest

// A cloned repository is untrusted input: symlinks committed at the paths
// fleetwatch writes must never carry a write out of the project. Each case
// commits one in a real repository, clones it, runs the verbs in the clone
// and checks that what lies outside is byte for byte as it was.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// outside is what sits beside the clone: a file and a folder a symlink in
// the clone may point at, and a name that does not exist (for dangling ones).
type outside struct{ dir, file, folder, missing string }

func newOutside(t *testing.T, base string) outside {
	t.Helper()
	o := outside{dir: filepath.Join(base, "outside")}
	o.file, o.folder, o.missing = filepath.Join(o.dir, "victim"), filepath.Join(o.dir, "folder"), filepath.Join(o.dir, "nothing-here")
	if err := os.MkdirAll(o.folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.file, []byte("export PS1='$ '\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return o
}

// snapshot is every path under dir with its content ("<dir>" or "-> target"
// for folders and links).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case fi.IsDir():
			out[rel] = "<dir>"
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for k, v := range after {
		if b, ok := before[k]; !ok || b != v {
			t.Errorf("%s: outside the project %s changed: was %q, now %q", what, k, b, v)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			t.Errorf("%s: outside the project %s is gone", what, k)
		}
	}
}

// clonedWithSymlink makes a repository with a scaffolded tree, a ready plan
// and a symlink committed at link (relative to the project) pointing at
// target, clones it and returns the clone.
func clonedWithSymlink(t *testing.T, base, link, target string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	origin, clone := filepath.Join(base, "origin"), filepath.Join(base, "clone")
	if r := fwtest.Run(t, base, "scaffold", origin); r.Code != 0 {
		t.Fatalf("scaffold: %v", r)
	}
	fwtest.WritePlan(t, origin, fwtest.Plan{Rel: "features/a.md", Fields: "Preferred models: mid"}, 0)
	at := filepath.Join(origin, filepath.FromSlash(link))
	if err := os.RemoveAll(at); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
		t.Fatal(err)
	}
	// Relative, as a committed link would be, from where it sits in the clone.
	rel, err := filepath.Rel(filepath.Dir(filepath.Join(clone, filepath.FromSlash(link))), target)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rel, at); err != nil {
		t.Fatal(err)
	}
	testkit.Git(t, origin, "init", "-q")
	testkit.Git(t, origin, "add", "-A", "-f")
	testkit.Git(t, origin, "commit", "-q", "-m", "a tree with a symlink")
	testkit.Git(t, base, "clone", "-q", origin, clone)
	if fi, err := os.Lstat(filepath.Join(clone, filepath.FromSlash(link))); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the clone has no symlink at %s: %v", link, err)
	}
	return clone
}

func TestSymlinkedWritePathsAreRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		link   string
		target func(o outside) string
		args   []string
	}{
		{name: "EventLog", link: ".plans/logs/events.jsonl", target: func(o outside) string { return o.file },
			args: []string{"work-once", "--agent-id", "w1"}},
		{name: "LogsFolder", link: ".plans/logs", target: func(o outside) string { return o.folder },
			args: []string{"work-once", "--agent-id", "w1"}},
		{name: "Leases", link: ".plans/.leases", target: func(o outside) string { return o.folder },
			args: []string{"work-once", "--agent-id", "w1"}},
		{name: "LeasesDangling", link: ".plans/.leases", target: func(o outside) string { return o.missing },
			args: []string{"work-once", "--agent-id", "w1"}},
		{name: "InProgressLane", link: ".plans/in-progress", target: func(o outside) string { return o.folder },
			args: []string{"work-once", "--agent-id", "w1"}},
		{name: "Worktrees", link: "var/worktrees", target: func(o outside) string { return o.folder },
			args: []string{"work-once", "--agent-id", "w1", "--ensure-worktree"}},
		{name: "WorkerLog", link: "var/fleet/logs/w1.log", target: func(o outside) string { return o.file },
			args: []string{"work-once", "--agent-id", "w1"}},
		{name: "VarFolder", link: "var", target: func(o outside) string { return o.folder },
			args: []string{"work-once", "--agent-id", "w1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			o := newOutside(t, base)
			clone := clonedWithSymlink(t, base, c.link, c.target(o))
			before := snapshot(t, o.dir)

			// Read-only faces report the link and go on.
			r := fwtest.Run(t, clone, "check")
			if r.Code != 1 || !strings.Contains(r.Stdout, "symlink") {
				t.Errorf("check should report the symlink: %v", r)
			}
			if r := fwtest.Run(t, clone, "work-once", "--list", "--agent-id", "w1"); r.Code != 0 || !strings.Contains(r.Stdout, "a.md") {
				t.Errorf("--list should still show the ready plan: %v", r)
			}

			r = fwtest.Run(t, clone, c.args...)
			fwtest.OneLineError(t, r, c.link, "symlink")
			if !fwtest.Exists(clone, "features/a.md") || fwtest.Exists(clone, "in-progress/a.md") {
				t.Errorf("a refused claim moved the plan")
			}
			if _, err := os.Lstat(filepath.Join(clone, ".plans", ".leases", "features__a.md.json")); err == nil {
				t.Errorf("a refused claim left a lease")
			}
			// Every other writing verb is refused too, or has nothing to do.
			for _, args := range [][]string{
				{"park", "a", "--to", "blocked", "--agent-id", "w1"},
				{"board", "--once"},
			} {
				fwtest.Run(t, clone, args...)
			}
			sameSnapshot(t, c.name, before, snapshot(t, o.dir))
		})
	}
}

// An unusable lease folder is a hard error, never "already held": a fleet
// that exits 1 on it idles silently.
func TestLeasesFolderThatIsAFileIsExit2(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md", Fields: "Preferred models: mid"})
	leases := filepath.Join(dir, ".plans", ".leases")
	if err := os.RemoveAll(leases); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(leases, []byte("not a folder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fwtest.OneLineError(t, fwtest.Run(t, dir, "work-once", "--agent-id", "w1"), ".plans/.leases", "not a directory")
	if r := fwtest.Run(t, dir, "check"); r.Code != 1 || !strings.Contains(r.Stdout, ".leases") {
		t.Errorf("check should report the lease folder: %v", r)
	}
}

// The event log and var/ are ignored by files that ignore themselves: after
// scaffold and a claim nothing shows in git status, and no tracked file was
// edited.
func TestIgnoreFilesIgnoreThemselves(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	testkit.Git(t, dir, "init", "-q")
	if r := fwtest.Run(t, dir, "scaffold", dir); r.Code != 0 {
		t.Fatalf("scaffold: %v", r)
	}
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "features/a.md", Fields: "Preferred models: mid"}, 0)
	testkit.Git(t, dir, "add", "-A")
	testkit.Git(t, dir, "commit", "-q", "-m", "tree")
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--agent-id", "w1"), 0)
	testkit.Git(t, dir, "add", "-A")
	testkit.Git(t, dir, "commit", "-q", "-m", "claimed")
	for _, f := range []string{".plans/logs/events.jsonl", "var/fleet/workers/w1.json", "var/.gitignore", ".plans/logs/.gitignore"} {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			t.Errorf("%s missing: %v", f, err)
		}
		cmd := exec.Command("git", "ls-files", "--error-unmatch", f)
		cmd.Dir = dir
		if cmd.Run() == nil {
			t.Errorf("%s is tracked; it should ignore itself", f)
		}
	}
}
