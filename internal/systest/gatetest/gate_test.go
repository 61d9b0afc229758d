package gatetest

import (
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// What an agent that can write the project folder tries against the gate
// (issue 24): each attack must leave dev where it was.

// onDev commits files on dev in a throwaway worktree, as a push to dev
// outside the queue would; it returns dev's new tip.
func onDev(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	wt := filepath.Join(t.TempDir(), "dev")
	testkit.Git(t, dir, "worktree", "add", "-q", wt, "dev")
	for rel, content := range files {
		landkit.Write(t, wt, rel, content)
		testkit.Git(t, wt, "add", rel)
	}
	testkit.Git(t, wt, "commit", "-q", "-m", "outside the queue")
	tip := testkit.Git(t, wt, "rev-parse", "HEAD")
	testkit.Git(t, dir, "worktree", "remove", "--force", wt)
	return tip
}

func wantDevAt(t *testing.T, dir, old string) {
	t.Helper()
	if now := fwtest.GitOut(t, dir, "rev-parse", "dev"); now != old {
		t.Errorf("dev moved to %s (%s)", now, fwtest.GitOut(t, dir, "log", "--oneline", "-3", "dev"))
	}
}

// The working tree's fleetwatch.yaml keeps the check's name but runs true:
// the committed check still gates, and check and queue list say so.
func TestChecksComeFromTheIntegrationBranch(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, landkit.PassCheck)
	landkit.Feature(t, dir, "bad", map[string]string{"bad": "x\n"})
	landkit.Queued(t, dir, "bad")
	fwtest.Want(t, fwtest.Run(t, dir, "check"), 0)
	landkit.Write(t, dir, "fleetwatch.yaml", "integration: dev\nchecks:\n  - {name: test, run: [sh, -c, 'true']}\n")
	old := fwtest.GitOut(t, dir, "rev-parse", "dev")
	r := landkit.Land(t, dir, nil)
	landkit.WantNotReady(t, r, "test failed")
	wantDevAt(t, dir, old)

	r = fwtest.Run(t, dir, "check")
	fwtest.Want(t, r, 1)
	if !strings.Contains(r.Stdout, "refs/heads/dev:fleetwatch.yaml") {
		t.Errorf("check does not name the committed file: %v", r)
	}
	r = fwtest.Run(t, dir, "queue", "list")
	fwtest.Want(t, r, 0)
	if n := strings.Count(r.Stderr, "other checks than refs/heads/dev:fleetwatch.yaml"); n != 1 {
		t.Errorf("queue list says the working copy differs %d times: %v", n, r)
	}
}

// A cache entry whose tree is the real merge plus a file no commit holds
// supplies nothing: the real merge lands.
func TestForgedCacheTreeDoesNotLand(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, landkit.PassCheck)
	tip := landkit.Feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	landkit.Queued(t, dir, "a")
	landkit.List(t, dir) // writes the cache
	dev := fwtest.GitOut(t, dir, "rev-parse", "dev")
	real := fwtest.GitOut(t, dir, "merge-tree", "--write-tree", dev, tip)
	index := filepath.Join(t.TempDir(), "index")
	env := []string{"GIT_INDEX_FILE=" + index}
	gitEnv(t, dir, env, "read-tree", real)
	blob := gitEnv(t, dir, nil, "hash-object", "-w", "--stdin")
	gitEnv(t, dir, env, "update-index", "--add", "--cacheinfo", "100644,"+blob+",evil.txt")
	forged := gitEnv(t, dir, env, "write-tree")
	cache := filepath.Join(dir, "var", "fleet", "queue", "cache.json")
	var entries map[string]map[string]any
	if err := json.Unmarshal([]byte(landkit.ReadFile(t, dir, "var/fleet/queue/cache.json")), &entries); err != nil {
		t.Fatal(err)
	}
	e, ok := entries[dev+" "+tip]
	if !ok {
		t.Fatalf("no cache entry for %s %s: %v", dev, tip, entries)
	}
	e["tree"] = forged
	data, _ := json.Marshal(entries)
	if err := os.WriteFile(cache, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fwtest.Want(t, landkit.Land(t, dir, nil), 0)
	landkit.WantLanded(t, dir, "a", tip)
	if got := fwtest.GitOut(t, dir, "rev-parse", "dev^{tree}"); got != real {
		t.Errorf("dev's tree is %s, want the real merge %s (forged %s)", got, real, forged)
	}
	if _, err := landkit.GitCmd(dir, "cat-file", "-e", "dev:evil.txt"); err == nil {
		t.Error("the forged file landed")
	}
}

// gitEnv is git in dir with env added, "evil" on stdin.
func gitEnv(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := osexec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader("evil\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// A record of another check spec, copied over the failing check's result
// for the candidate tree, does not pass the gate: the check runs again.
func TestForgedCheckRecordOfAnotherSpecDoesNotPass(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, landkit.PassCheck)
	landkit.Feature(t, dir, "bad", map[string]string{"bad": "x\n"})
	landkit.Queued(t, dir, "bad")
	old := fwtest.GitOut(t, dir, "rev-parse", "dev")
	landkit.WantNotReady(t, landkit.Land(t, dir, nil), "test failed")
	records, _ := filepath.Glob(filepath.Join(dir, "var", "fleet", "checks", "*", "test-*.json"))
	if len(records) != 1 {
		t.Fatalf("want one stored result, got %v", records)
	}
	data, err := os.ReadFile(records[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	// What a run of [true] under the same name writes: another spec.
	rec["result"], rec["exit"], rec["note"], rec["argv"] = "pass", 0, "", []string{"true"}
	rec["spec"] = strings.Repeat("ab", 32)
	data, _ = json.Marshal(rec)
	if err := os.WriteFile(records[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	landkit.WantNotReady(t, landkit.Land(t, dir, nil), "test failed")
	wantDevAt(t, dir, old)
}

// After approval the agent rewrites its commit so that git range-diff
// still says `=`: a binary file's bytes, a mode, a file turned symlink. The
// approval is void, and nothing lands.
func TestApprovalBoundToTheApprovedContent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, wt string)
	}{
		{"binary bytes", func(t *testing.T, wt string) { landkit.Write(t, wt, "bin.dat", "\x00\x01EVIL\x02") }},
		{"mode", func(t *testing.T, wt string) {
			if err := os.Chmod(filepath.Join(wt, "run.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlink", func(t *testing.T, wt string) {
			os.Remove(filepath.Join(wt, "link"))
			if err := os.Symlink("a.txt", filepath.Join(wt, "link")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := landkit.LandProject(t, landkit.PassCheck)
			landkit.Feature(t, dir, "a", map[string]string{"a.txt": "a\n", "bin.dat": "\x00\x01good\x02", "run.sh": "echo hi\n", "link": "a.txt"})
			landkit.Queued(t, dir, "a")
			wt := filepath.Join(t.TempDir(), "wt")
			testkit.Git(t, dir, "worktree", "add", "-q", wt, "feature/a")
			tc.change(t, wt)
			testkit.Git(t, wt, "add", "-A")
			testkit.Git(t, wt, "commit", "-q", "--amend", "--no-edit")
			testkit.Git(t, dir, "worktree", "remove", "--force", wt)
			if st, why := landkit.StateOf(t, dir, "a"); st != "stale" {
				t.Errorf("a rewritten after approve is %q (%s)", st, why)
			}
			old := fwtest.GitOut(t, dir, "rev-parse", "dev")
			landkit.WantNotReady(t, landkit.Land(t, dir, nil), "review it again")
			wantDevAt(t, dir, old)
		})
	}
}

// A lander killed right after its swap, then a new commit on the feature
// branch or on dev: the next queue land finishes that landing (the
// approved commit pinned, the plan completed), and queue list says what
// is left before it.
func TestLandCutShortAfterTheSwapThenBranchesMove(t *testing.T) {
	t.Parallel()
	for _, moved := range []string{"feature", "dev", "both", "feature deleted"} {
		t.Run(moved, func(t *testing.T) {
			t.Parallel()
			dir := landkit.LandProject(t, landkit.PassCheck)
			tip := landkit.Feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
			landkit.Queued(t, dir, "a")
			if r := landkit.Land(t, dir, []string{"FLEETWATCH_FAILPOINT=land:cas"}); r.Code != -9 {
				t.Fatalf("the failpoint did not kill the lander: %v", r)
			}
			if moved == "feature" || moved == "both" {
				landkit.Feature(t, dir, "a", map[string]string{"later.txt": "after the landing\n"})
			}
			if moved == "dev" || moved == "both" {
				onDev(t, dir, map[string]string{"dev.txt": "dev moves\n"})
			}
			if moved == "feature deleted" {
				testkit.Git(t, dir, "branch", "-D", "feature/a")
			}
			var why string
			for _, it := range landkit.List(t, dir).Items {
				if it.Slug == "a" {
					why = it.Why
				}
			}
			if !strings.Contains(why, "cut short") || !strings.Contains(why, "not pinned") {
				t.Errorf("queue list does not say the landing is unfinished: %q", why)
			}
			fwtest.Want(t, landkit.Land(t, dir, nil), 0)
			if !fwtest.Exists(dir, "completed/a.md") || fwtest.Exists(dir, "review-needed/a.md") {
				t.Errorf("a's plan did not move to completed/")
			}
			if got := fwtest.GitOut(t, dir, "rev-parse", "refs/fleetwatch/landed/a"); got != tip {
				t.Errorf("refs/fleetwatch/landed/a = %s, want the approved %s", got, tip)
			}
			if l := landkit.List(t, dir); len(l.Items) != 0 && l.Items[0].Position != nil {
				t.Errorf("a is still queued: %+v", l.Items)
			}
			landkit.WantNotReady(t, landkit.Land(t, dir, nil), "empty")
		})
	}
}

// dev moved by someone other than the queue (here: a commit straight onto
// it, as an agent's git update-ref would): check exits 1 with a line,
// queue list says so, and the event log has one event naming both commits.
func TestIntegrationMovedOutsideTheQueueIsNoticed(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, landkit.PassCheck)
	tip := landkit.Feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	landkit.Queued(t, dir, "a")
	fwtest.Want(t, landkit.Land(t, dir, nil), 0)
	landkit.WantLanded(t, dir, "a", tip)
	set := fwtest.GitOut(t, dir, "rev-parse", "dev")
	fwtest.Want(t, fwtest.Run(t, dir, "check"), 0)
	if r := fwtest.Run(t, dir, "queue", "list"); strings.Contains(r.Stderr, "moved outside") {
		t.Errorf("queue list before any move: %v", r)
	}

	moved := onDev(t, dir, map[string]string{"evil.txt": "unreviewed\n"})
	r := fwtest.Run(t, dir, "check")
	fwtest.Want(t, r, 1)
	if !strings.Contains(r.Stdout, "refs/heads/dev moved outside the queue") || !strings.Contains(r.Stdout, set[:12]) || !strings.Contains(r.Stdout, moved[:12]) {
		t.Errorf("check does not name the move: %v", r)
	}
	for range 2 {
		r = fwtest.Run(t, dir, "queue", "list")
		fwtest.Want(t, r, 0)
		if n := strings.Count(r.Stderr, "moved outside the queue"); n != 1 {
			t.Errorf("queue list says the move %d times: %v", n, r)
		}
	}
	var events []map[string]any
	for _, e := range fwtest.EventsOf(t, dir) {
		if e["event"] == "integration-moved" {
			events = append(events, e)
		}
	}
	if len(events) != 1 || events[0]["from"] != set || events[0]["to"] != moved {
		t.Errorf("integration-moved events: %v; want one from %s to %s", events, set, moved)
	}
}

// The working tree naming another integration branch (one an agent could
// own) is a notice too: the queue last landed elsewhere.
func TestIntegrationRenamedInTheWorkingTreeIsNoticed(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, landkit.PassCheck)
	landkit.Feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	landkit.Queued(t, dir, "a")
	testkit.Git(t, dir, "branch", "mine", "dev")
	landkit.Write(t, dir, "fleetwatch.yaml", "integration: mine\n"+landkit.PassCheck)
	r := fwtest.Run(t, dir, "check")
	fwtest.Want(t, r, 1)
	if !strings.Contains(r.Stdout, "names mine as the integration branch") {
		t.Errorf("check does not say the integration branch changed: %v", r)
	}
}
