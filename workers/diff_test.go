package workers

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/seat"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// diffRepo is a project whose plan "demo" has a worktree (mid-1's, on
// feature/demo) with commits since it left dev: an edited README, a Go
// file with tabs and an escape code, a binary file and a huge one; dev
// moved on after it (devonly.txt, which no diff may show). In the
// worktree: an unstaged edit, a staged new file, and untracked files (one
// a symlink out of the project).
func diffRepo(t testing.TB) (dir string, wt tree.Worktree) {
	t.Helper()
	dir = testkit.Repo(t)
	wt, err := seat.Ensure(dir, "mid-1", "demo")
	if err != nil {
		t.Fatal(err)
	}
	write := func(root, name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(wt.Path, "README", "hello, world\n")
	write(wt.Path, "a.go", "package a\n\nfunc f() {\n\tx := 1 // \x1b[31mred\n}\n")
	write(wt.Path, "logo.bin", "PNG\x00\x01\x02binary")
	write(wt.Path, "big.txt", strings.Repeat("line\n", look.DiffFileLines+500))
	testkit.Git(t, wt.Path, "add", "-A")
	testkit.Git(t, wt.Path, "commit", "-q", "-m", "demo: start")
	write(dir, "devonly.txt", "only on dev\n")
	testkit.Git(t, dir, "checkout", "-q", "dev")
	testkit.Git(t, dir, "add", "devonly.txt")
	testkit.Git(t, dir, "commit", "-q", "-m", "dev moves on")

	write(wt.Path, "a.go", "package a\n\nfunc f() {\n\tx := 2\n}\n")
	write(wt.Path, "staged.txt", "staged\n")
	testkit.Git(t, wt.Path, "add", "staged.txt")
	write(wt.Path, "notes.txt", "one\ntwo\nthree")
	if err := os.Symlink("/etc/passwd", filepath.Join(wt.Path, "passwd")); err != nil {
		t.Fatal(err)
	}
	return dir, wt
}

func fileNamed(t *testing.T, files []look.FileDiff, name string) look.FileDiff {
	t.Helper()
	for _, f := range files {
		if f.Path == name {
			return f
		}
	}
	t.Fatalf("no %s among %v", name, files)
	return look.FileDiff{}
}

func checkDemoDiff(t *testing.T, dir string, wt tree.Worktree, d look.Diff) {
	t.Helper()
	base := testkit.Git(t, dir, "merge-base", "dev", "feature/demo")
	if d.Branch != "feature/demo" || d.Integration != "dev" || d.Base != base || d.Worktree != "var/worktrees/mid-1" {
		t.Errorf("compared %s with %s at %s in %q, want feature/demo, dev, %s, var/worktrees/mid-1", d.Branch, d.Integration, d.Base, d.Worktree, base)
	}
	var names []string
	for _, f := range d.Committed {
		names = append(names, f.Path)
	}
	if want := []string{"README", "a.go", "big.txt", "logo.bin"}; !slices.Equal(names, want) {
		t.Errorf("committed files %v, want %v (dev's own change left out)", names, want)
	}
	readme := fileNamed(t, d.Committed, "README")
	if readme.Added != 1 || readme.Deleted != 1 || !slices.Equal(readme.Lines, []string{"@@ -1 +1 @@", "-hello", "+hello, world"}) {
		t.Errorf("README: +%d −%d %q", readme.Added, readme.Deleted, readme.Lines)
	}
	ago := fileNamed(t, d.Committed, "a.go")
	if !slices.Contains(ago.Lines, "+    x := 1 // ?[31mred") || !slices.Contains(ago.Meta, "new file mode 100644") {
		t.Errorf("a.go: tabs expanded and the escape replaced, its mode in Meta: %q %q", ago.Meta, ago.Lines)
	}
	if bin := fileNamed(t, d.Committed, "logo.bin"); !bin.Binary || bin.Summary == "" || len(bin.Lines) != 0 {
		t.Errorf("logo.bin summarised as binary: %+v", bin)
	}
	if big := fileNamed(t, d.Committed, "big.txt"); big.Added != look.DiffFileLines+500 || !strings.Contains(big.Summary, "more than 2000 changed lines") || len(big.Lines) != 0 {
		t.Errorf("big.txt summarised: +%d %q, %d lines", big.Added, big.Summary, len(big.Lines))
	}
	names = names[:0]
	for _, f := range d.Uncommitted {
		names = append(names, fmt.Sprintf("%s +%d −%d", f.Path, f.Added, f.Deleted))
	}
	if want := []string{"a.go +1 −1", "staged.txt +1 −0"}; !slices.Equal(names, want) {
		t.Errorf("uncommitted %v, want %v", names, want)
	}
	if want := []look.Untracked{{Path: "notes.txt", Lines: 3}, {Path: "passwd", Lines: -1}}; !slices.Equal(d.Untracked, want) {
		t.Errorf("untracked %v, want %v (the symlink not read)", d.Untracked, want)
	}
}

func TestDiffOfPlanShowsBranchAndWorktree(t *testing.T) {
	dir, wt := diffRepo(t)
	d, err := look.DiffOfPlan(dir, "demo")
	if err != nil {
		t.Fatal(err)
	}
	checkDemoDiff(t, dir, wt, d)
}

func TestDiffOfWorktreeAndWorker(t *testing.T) {
	dir, wt := diffRepo(t)
	d, err := look.DiffOfWorktree(dir, wt.Path)
	if err != nil {
		t.Fatal(err)
	}
	checkDemoDiff(t, dir, wt, d)
	d, err = look.DiffOfWorker(dir, look.State{AgentID: "mid-1", Worktree: wt.Path})
	if err != nil {
		t.Fatal(err)
	}
	checkDemoDiff(t, dir, wt, d)
	d, err = look.DiffOfWorker(dir, look.State{AgentID: "mid-1", Plan: filepath.Join(dir, ".plans", "in-progress", "demo.md")})
	if err != nil {
		t.Fatal(err)
	}
	checkDemoDiff(t, dir, wt, d)
}

func TestDiffOfPlanWithoutWorktree(t *testing.T) {
	dir, wt := diffRepo(t)
	if _, err := seat.Remove(dir, "mid-1", true, false); err != nil {
		t.Fatal(err)
	}
	d, err := look.DiffOfPlan(dir, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if d.Worktree != "" || len(d.Uncommitted) != 0 || len(d.Untracked) != 0 || len(d.Committed) != 4 {
		t.Errorf("branch alone: worktree %q, %d uncommitted, %d untracked, %d committed", d.Worktree, len(d.Uncommitted), len(d.Untracked), len(d.Committed))
	}
	_ = wt
}

func TestDiffRefusals(t *testing.T) {
	dir, _ := diffRepo(t)
	cases := []struct {
		name string
		do   func() (look.Diff, error)
		want string
	}{
		{"no branch", func() (look.Diff, error) { return look.DiffOfPlan(dir, "nope") }, "nope: no branch feature/nope and no worktree on it"},
		{"outside", func() (look.Diff, error) { return look.DiffOfWorktree(dir, t.TempDir()) }, "is not inside " + dir},
		{"missing", func() (look.Diff, error) {
			return look.DiffOfWorktree(dir, filepath.Join(dir, "var", "worktrees", "gone"))
		}, "no such worktree"},
		{"worker", func() (look.Diff, error) { return look.DiffOfWorker(dir, look.State{AgentID: "w"}) }, "w: its state file names no worktree and no plan"},
	}
	for _, c := range cases {
		if _, err := c.do(); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.name, err, c.want)
		}
	}
	bare := testkit.Repo(t)
	testkit.Git(t, bare, "branch", "-m", "main", "trunk")
	testkit.Git(t, bare, "branch", "feature/x")
	if _, err := look.DiffOfPlan(bare, "x"); err == nil || !strings.Contains(err.Error(), "no integration branch (dev, develop)") {
		t.Errorf("without an integration branch: %v", err)
	}
	// fleetwatch.yaml names it.
	if err := os.WriteFile(filepath.Join(bare, "fleetwatch.yaml"), []byte("integration: trunk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := look.DiffOfPlan(bare, "x")
	if err != nil || d.Integration != "trunk" || d.Branch != "feature/x" || len(d.Committed) != 0 {
		t.Errorf("with integration: trunk: %+v, %v", d, err)
	}
}

func TestDiffReadsNothingOutsideTheProject(t *testing.T) {
	dir, wt := diffRepo(t)
	link := filepath.Join(dir, "var", "worktrees", "link")
	if err := os.Symlink(wt.Path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := look.DiffOfWorktree(dir, link); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a worktree reached through a symlink: %v", err)
	}
	out := filepath.Join(t.TempDir(), "out")
	testkit.Git(t, dir, "worktree", "add", "-q", "-b", "feature/out", out, "dev")
	if err := os.WriteFile(filepath.Join(out, "secret.txt"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := look.DiffOfPlan(dir, "out")
	if err != nil {
		t.Fatal(err)
	}
	if d.Worktree != "" || len(d.Untracked) != 0 || !strings.Contains(d.Note, "are not read: "+out+" is not inside "+dir) {
		t.Errorf("a worktree outside the project: worktree %q, untracked %v, note %q", d.Worktree, d.Untracked, d.Note)
	}
}

func TestDiffHugePatchBytes(t *testing.T) {
	dir, wt := diffRepo(t)
	// Few lines, many bytes: a minified file.
	long := strings.Repeat("x", look.DiffFileBytes/4) + "\n"
	if err := os.WriteFile(filepath.Join(wt.Path, "min.js"), []byte(strings.Repeat(long, 5)), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := look.DiffOfPlan(dir, "demo")
	if err != nil {
		t.Fatal(err)
	}
	_ = d
	testkit.Git(t, wt.Path, "add", "min.js")
	d, err = look.DiffOfPlan(dir, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if f := fileNamed(t, d.Uncommitted, "min.js"); !strings.Contains(f.Summary, "KiB of patch") || len(f.Lines) != 0 {
		t.Errorf("min.js: %q, %d lines", f.Summary, len(f.Lines))
	}
	if f := fileNamed(t, d.Uncommitted, "a.go"); len(f.Lines) == 0 {
		t.Errorf("a.go lost its patch beside a huge file")
	}
}

// BenchmarkDiffOfPlan10k computes a diff of 10,000 changed lines (20
// files of 500) on a real repository: numstat, patch and the worktree.
func BenchmarkDiffOfPlan10k(b *testing.B) {
	dir := testkit.Repo(b)
	wt, err := seat.Ensure(dir, "mid-1", "demo")
	if err != nil {
		b.Fatal(err)
	}
	for i := range 20 {
		var s strings.Builder
		for j := range 500 {
			fmt.Fprintf(&s, "\tline %d of file %d\n", j, i)
		}
		if err := os.WriteFile(filepath.Join(wt.Path, fmt.Sprintf("f%02d.go", i)), []byte(s.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	testkit.Git(b, wt.Path, "add", "-A")
	testkit.Git(b, wt.Path, "commit", "-q", "-m", "10k lines")
	b.ResetTimer()
	for b.Loop() {
		d, err := look.DiffOfPlan(dir, "demo")
		if err != nil || len(d.Committed) != 20 {
			b.Fatal(len(d.Committed), err)
		}
	}
}

func TestDiffFindsRenames(t *testing.T) {
	dir, wt := diffRepo(t)
	testkit.Git(t, wt.Path, "mv", "a.go", "b.go")
	d, err := look.DiffOfPlan(dir, "demo")
	if err != nil {
		t.Fatal(err)
	}
	f := fileNamed(t, d.Uncommitted, "b.go")
	if f.From != "a.go" || f.Added != 1 || f.Deleted != 1 || !slices.Contains(f.Meta, "rename from a.go") || !slices.Contains(f.Lines, "+    x := 2") {
		t.Errorf("a.go renamed to b.go and edited: %+v", f)
	}
	if len(d.Uncommitted) != 2 {
		t.Errorf("uncommitted %+v, want b.go and staged.txt", d.Uncommitted)
	}
}
