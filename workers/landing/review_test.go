package landing

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// commitOn commits file=content on the checked-out branch of wt.
func commitOn(t *testing.T, wt, file, content string) string {
	t.Helper()
	os.WriteFile(filepath.Join(wt, file), []byte(content), 0o644)
	fwtest.GitOut(t, wt, "add", file)
	fwtest.GitOut(t, wt, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "change "+file)
	return fwtest.GitOut(t, wt, "rev-parse", "HEAD")
}

// An approval holds for a later tip only when landing it gives the very
// tree landing the approved commit would: a rebase onto a moved dev keeps
// it; a binary file's bytes, an executable bit or a file turned symlink
// (all `=` to git range-diff) do not.
func TestSameLanding(t *testing.T) {
	t.Parallel()
	dir, _ := checksRepo(t)
	git := func(args ...string) string {
		return fwtest.GitOut(t, dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	}
	commit := func(msg string) string {
		git("add", "-A")
		git("commit", "-q", "-m", msg)
		return git("rev-parse", "HEAD")
	}
	put := func(file, content string, mode os.FileMode) {
		os.Remove(filepath.Join(dir, file))
		if err := os.WriteFile(filepath.Join(dir, file), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Join(dir, file), mode)
	}
	git("branch", "dev")
	git("checkout", "-q", "-b", "feature/x", "dev")
	put("a.txt", "a\n", 0o644)
	put("bin.dat", "\x00\x01binary\x02", 0o644)
	put("run.sh", "echo hi\n", 0o644)
	put("link", "a.txt", 0o644)
	approved := commit("x")
	// Each variant redoes the approved commit (same message, same files)
	// with one change range-diff does not see.
	variant := func(name string, change func()) string {
		git("checkout", "-q", "-b", name, "dev")
		git("checkout", "-q", approved, "--", ".")
		change()
		return commit("x")
	}
	binary := variant("binary", func() { put("bin.dat", "\x00\x01BINARY\x02", 0o644) })
	mode := variant("mode", func() { put("run.sh", "echo hi\n", 0o755) })
	symlink := variant("symlink", func() {
		os.Remove(filepath.Join(dir, "link"))
		if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
	})
	git("checkout", "-q", "dev")
	put("other.txt", "other\n", 0o644)
	commit("dev moves")
	onto := git("rev-parse", "dev")
	git("checkout", "-q", "-b", "rebased", "feature/x")
	git("rebase", "-q", "dev")
	rebased := git("rev-parse", "HEAD")
	git("checkout", "-q", "-b", "more", "feature/x")
	put("c.txt", "c\n", 0o644)
	more := commit("more")
	for _, tc := range []struct {
		name     string
		tip      string
		wantSame bool
	}{
		{"same commit", approved, true},
		{"rebased onto a moved dev", rebased, true},
		{"a commit added", more, false},
		{"a binary file's bytes swapped", binary, false},
		{"a file made executable", mode, false},
		{"a file turned symlink with the same text", symlink, false},
	} {
		same, err := SameLanding(dir, onto, approved, tc.tip)
		if err != nil || same != tc.wantSame {
			t.Errorf("%s: SameLanding = %v, %v; want %v", tc.name, same, err, tc.wantSame)
		}
	}
	if _, err := SameLanding(dir, onto, approved, strings.Repeat("0", 40)); err == nil {
		t.Error("a missing commit is not an error")
	}
}

func TestParseVerdict(t *testing.T) {
	for _, tc := range []struct{ in, verdict, findings string }{
		{"ACCEPT\n\n- fine\n", "ACCEPT", "- fine\n"},
		{"\n\n  REVISE\nfix x", "REVISE", "fix x"},
		{"# ESCALATE\n", "ESCALATE", ""},
		{"**ACCEPT**: looks good\n- one nit\n", "ACCEPT", "looks good\n\n- one nit\n"},
		{"ACCEPTED\n", "", ""},
		{"accept\n", "", ""},
		{"I think ACCEPT\n", "", ""},
		{"", "", ""},
	} {
		v, f := parseVerdict([]byte(tc.in))
		if v != tc.verdict || string(f) != tc.findings {
			t.Errorf("parseVerdict(%q) = %q, %q; want %q, %q", tc.in, v, f, tc.verdict, tc.findings)
		}
	}
}

func TestChooseReviewer(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	reg := &registry.Registry{Path: "endpoints.yaml", Endpoints: []registry.Endpoint{
		{Name: "small", Tier: "swarm", Model: "s"},
		{Name: "mid-a", Tier: "mid", Model: "ma"},
		{Name: "mid-b", Tier: "mid", Model: "mb"},
		{Name: "big", Tier: "reasoner", Model: "r"},
	}}
	os.MkdirAll(filepath.Join(project, filepath.FromSlash(look.StateDir)), 0o755)
	os.WriteFile(filepath.Join(project, filepath.FromSlash(look.StateDir), "mid-7.json"),
		[]byte(`{"agent_id":"mid-7","tier":"mid","model":"ma"}`), 0o644)
	for _, tc := range []struct{ author, want, got string }{
		{author: "", got: "small"},       // no known author: any endpoint
		{author: "mid-7", got: "mid-b"},  // same tier, not its own endpoint
		{author: "gone-1", got: "small"}, // no state file: any endpoint
		{author: "mid-7", want: "mid-a", got: "mid-a"},
	} {
		tier, own := authorOf(reg, project, tc.author)
		ep, err := chooseReviewer(reg, tier, own, tc.author, tc.want)
		if err != nil || ep.Name != tc.got {
			t.Errorf("chooseReviewer(%q, %q) = %q, %v; want %q", tc.author, tc.want, ep.Name, err, tc.got)
		}
	}
	if _, err := chooseReviewer(reg, model.NoTier, "", "", "nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown endpoint: %v", err)
	}
}

// A review worktree left by a killed run (its pid gone) is removed by the
// next review; a live run's is left alone.
func TestLeftoverReviewWorktreesAreCleaned(t *testing.T) {
	t.Parallel()
	dir, head := checksRepo(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "var/fleet/reviews/wt", "x."+strconv.Itoa(dead.Process.Pid)+".abc")
	live := filepath.Join(dir, "var/fleet/reviews/wt", "y."+strconv.Itoa(os.Getppid())+".abc")
	for _, wt := range []string{gone, live} {
		fwtest.GitOut(t, dir, "worktree", "add", "--detach", "-q", wt, head)
	}
	cleanReviewWorktrees(dir)
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("leftover %s kept", gone)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live run's worktree removed: %v", err)
	}
	if list := fwtest.GitOut(t, dir, "worktree", "list", "--porcelain"); strings.Contains(list, gone) {
		t.Errorf("git still lists the leftover:\n%s", list)
	}
}

// A reviewer that makes its worktree's .git a git folder of its own, with
// a clean filter and a submodule whose repository has an fsmonitor, steers
// nothing of the git that looks at what it wrote: the filter and the
// fsmonitor never run, and what it wrote is still seen.
func TestWroteInFollowsTheProjectsRecord(t *testing.T) {
	t.Parallel()
	project := fwtest.GitRepo(t)
	// The change under review holds a submodule, so git looks at its
	// folder.
	fwtest.GitOut(t, project, "update-index", "--add", "--cacheinfo", "160000,"+fwtest.GitOut(t, project, "rev-parse", "HEAD")+",sub")
	fwtest.GitOut(t, project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a submodule")
	tip := fwtest.GitOut(t, project, "rev-parse", "HEAD")
	wt, err := addReviewWorktree(project, "x", tip)
	if err != nil {
		t.Fatal(err)
	}
	marks := t.TempDir()
	evil := func(dir, what string) {
		t.Helper()
		fwtest.GitOut(t, dir, "init", "-q")
		fwtest.GitOut(t, dir, "config", "filter.evil.clean", "touch '"+filepath.Join(marks, what+"-filter")+"'; cat")
		fwtest.GitOut(t, dir, "config", "core.fsmonitor", "touch '"+filepath.Join(marks, what+"-fsmonitor")+"'; false")
		os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("* filter=evil\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "bait.txt"), []byte("bait\n"), 0o644)
		fwtest.GitOut(t, dir, "add", "-A")
		fwtest.GitOut(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "bait")
		os.WriteFile(filepath.Join(dir, "bait.txt"), []byte("bait, changed\n"), 0o644)
	}
	os.Remove(filepath.Join(wt, ".git"))
	evil(filepath.Join(wt, "sub"), "sub")
	evil(wt, "top")
	os.RemoveAll(marks)
	os.Mkdir(marks, 0o755)

	what := wroteIn(wt, tip)
	if !strings.Contains(what, "bait.txt") || !strings.Contains(what, "sub") {
		t.Errorf("wroteIn = %q, want bait.txt and sub among it", what)
	}
	if ran, _ := os.ReadDir(marks); len(ran) > 0 {
		t.Errorf("the reviewer's programs ran: %v (wroteIn said %q)", ran, what)
	}
}
