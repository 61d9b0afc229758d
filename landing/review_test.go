package landing

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"fleetwatch/internal/testkit/fwtest"
	"fleetwatch/registry"
	"fleetwatch/workers"
)

// commitOn commits file=content on the checked-out branch of wt.
func commitOn(t *testing.T, wt, file, content string) string {
	t.Helper()
	os.WriteFile(filepath.Join(wt, file), []byte(content), 0o644)
	fwtest.GitOut(t, wt, "add", file)
	fwtest.GitOut(t, wt, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "change "+file)
	return fwtest.GitOut(t, wt, "rev-parse", "HEAD")
}

func TestPureRebase(t *testing.T) {
	t.Parallel()
	dir, _ := checksRepo(t)
	git := func(args ...string) string {
		return fwtest.GitOut(t, dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	}
	git("branch", "dev")
	git("checkout", "-q", "-b", "feature/x", "dev")
	commitOn(t, dir, "a.txt", "a\n")
	old := commitOn(t, dir, "b.txt", "b\n")
	git("checkout", "-q", "dev")
	commitOn(t, dir, "other.txt", "other\n")
	git("checkout", "-q", "-b", "rebased", "feature/x")
	git("rebase", "-q", "dev")
	rebased := git("rev-parse", "HEAD")
	git("checkout", "-q", "-b", "changed", "rebased")
	git("reset", "-q", "--hard", "HEAD~1")
	changed := commitOn(t, dir, "b.txt", "something else\n")
	git("checkout", "-q", "-b", "more", "feature/x")
	more := commitOn(t, dir, "c.txt", "c\n")
	for _, tc := range []struct {
		name     string
		new      string
		wantSame bool
	}{
		{"same commit", old, true},
		{"rebased onto a moved dev", rebased, true},
		{"a commit changed in the rebase", changed, false},
		{"a commit added", more, false},
	} {
		same, err := PureRebase(dir, "dev", old, tc.new)
		if err != nil || same != tc.wantSame {
			t.Errorf("%s: PureRebase = %v, %v; want %v", tc.name, same, err, tc.wantSame)
		}
	}
	if _, err := PureRebase(dir, "dev", old, strings.Repeat("0", 40)); err == nil {
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
	os.MkdirAll(filepath.Join(project, filepath.FromSlash(workers.StateDir)), 0o755)
	os.WriteFile(filepath.Join(project, filepath.FromSlash(workers.StateDir), "mid-7.json"),
		[]byte(`{"agent_id":"mid-7","tier":"mid","model":"ma"}`), 0o644)
	for _, tc := range []struct{ author, want, got string }{
		{author: "", got: "small"},       // no known author: any endpoint
		{author: "mid-7", got: "mid-b"},  // same tier, not its own endpoint
		{author: "gone-1", got: "small"}, // no state file: any endpoint
		{author: "mid-7", want: "mid-a", got: "mid-a"},
	} {
		ep, err := chooseReviewer(reg, project, tc.author, tc.want)
		if err != nil || ep.Name != tc.got {
			t.Errorf("chooseReviewer(%q, %q) = %q, %v; want %q", tc.author, tc.want, ep.Name, err, tc.got)
		}
	}
	if _, err := chooseReviewer(reg, project, "", "nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
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
