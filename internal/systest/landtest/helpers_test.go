package landtest

import (
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"fleetwatch/internal/testkit"
	"fleetwatch/internal/testkit/fwtest"
)

// Shared by the queue's whole-program tests (and readable by review's):
// a project on real git with an integration branch `dev`, feature branches
// made in throwaway worktrees, and the queue driven through fleetwatch.

// landProject is a git project whose fleetwatch.yaml, committed, says
// settings (the integration branch is dev, made from main): checks gate
// only as committed on dev.
func landProject(t *testing.T, settings string) string {
	t.Helper()
	dir := fwtest.GitProject(t)
	write(t, dir, "fleetwatch.yaml", "integration: dev\n"+settings)
	write(t, dir, "README", "base\nline two\nline three\n")
	write(t, dir, ".gitignore", "var/\n.plans/\n")
	testkit.Git(t, dir, "add", "README", ".gitignore", "fleetwatch.yaml")
	testkit.Git(t, dir, "commit", "-q", "-m", "base")
	testkit.Git(t, dir, "branch", "dev")
	return dir
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// feature puts slug's plan in review-needed/ and commits files on
// feature/<slug> from dev (or on top of the branch when it exists); it
// returns the new tip.
func feature(t *testing.T, dir, slug string, files map[string]string) string {
	t.Helper()
	if !fwtest.Exists(dir, "review-needed/"+slug+".md") {
		fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "review-needed/" + slug + ".md"}, 0)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	branch := "feature/" + slug
	if hasBranch(t, dir, branch) {
		testkit.Git(t, dir, "worktree", "add", "-q", wt, branch)
	} else {
		testkit.Git(t, dir, "worktree", "add", "-q", "-b", branch, wt, "dev")
	}
	for rel, content := range files {
		write(t, wt, rel, content)
		testkit.Git(t, wt, "add", rel)
	}
	testkit.Git(t, wt, "commit", "-q", "-m", slug+": change")
	tip := testkit.Git(t, wt, "rev-parse", "HEAD")
	testkit.Git(t, dir, "worktree", "remove", "--force", wt)
	return tip
}

func hasBranch(t *testing.T, dir, branch string) bool {
	return strings.TrimSpace(testkit.Git(t, dir, "branch", "--list", branch)) != ""
}

// approve is a person's approve through the review command.
func approve(t *testing.T, dir, slug string) {
	t.Helper()
	fwtest.Want(t, fwtest.Run(t, dir, "review", slug, "--approve"), 0)
}

// queued approves slug and adds it to the queue.
func queued(t *testing.T, dir, slug string) {
	t.Helper()
	approve(t, dir, slug)
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "add", slug), 0)
}

// listing is `queue list --json`, decoded.
type listing struct {
	Integration string `json:"integration"`
	Tip         string `json:"integration_tip"`
	Items       []struct {
		Slug          string   `json:"slug"`
		State         string   `json:"state"`
		Why           string   `json:"why"`
		Position      *int     `json:"position"`
		Commit        string   `json:"commit"`
		ApprovedBy    string   `json:"approved_by"`
		ConflictPaths []string `json:"conflict_paths"`
		Ahead         int      `json:"ahead"`
		Behind        int      `json:"behind"`
		Checks        []struct {
			Name   string `json:"name"`
			Result string `json:"result"`
			Log    string `json:"log"`
		} `json:"checks"`
	} `json:"items"`
}

func list(t *testing.T, dir string) listing {
	t.Helper()
	r := fwtest.Run(t, dir, "queue", "list", "--json")
	fwtest.Want(t, r, 0)
	var l listing
	if err := json.Unmarshal([]byte(r.Stdout), &l); err != nil {
		t.Fatalf("queue list --json: %v\n%s", err, r.Stdout)
	}
	return l
}

// stateOf is slug's state and reason in the listing.
func stateOf(t *testing.T, dir, slug string) (string, string) {
	t.Helper()
	for _, it := range list(t, dir).Items {
		if it.Slug == slug {
			return it.State, it.Why
		}
	}
	t.Fatalf("%s not in queue list", slug)
	return "", ""
}

// land runs queue land --yes with extra flags.
func land(t *testing.T, dir string, env []string, flags ...string) fwtest.Result {
	t.Helper()
	return fwtest.RunEnv(t, dir, env, append([]string{"queue", "land", "--yes"}, flags...)...)
}

// wantLanded checks slug landed once: its tip is in dev, the plan is in
// completed/, the ref is pinned and the queue no longer has it.
func wantLanded(t *testing.T, dir, slug, tip string) {
	t.Helper()
	if _, err := gitCmd(dir, "merge-base", "--is-ancestor", tip, "dev"); err != nil {
		t.Errorf("%s at %s is not in dev", slug, tip)
	}
	if !fwtest.Exists(dir, "completed/"+slug+".md") || fwtest.Exists(dir, "review-needed/"+slug+".md") {
		t.Errorf("%s's plan did not move to completed/", slug)
	}
	if got := fwtest.GitOut(t, dir, "rev-parse", "refs/fleetwatch/landed/"+slug); got != tip {
		t.Errorf("refs/fleetwatch/landed/%s = %s, want %s", slug, got, tip)
	}
	if n := strings.Count(fwtest.GitOut(t, dir, "log", "--format=%H", "dev"), tip); n != 1 {
		t.Errorf("%s appears %d times in dev's history", tip, n)
	}
	for _, it := range list(t, dir).Items {
		if it.Slug == slug && it.Position != nil {
			t.Errorf("%s still queued at %d", slug, *it.Position)
		}
	}
}

// gitCmd is git in dir, its error an answer (merge-base --is-ancestor).
func gitCmd(dir string, args ...string) (string, error) {
	out, err := osexec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	return strings.TrimSpace(string(out)), err
}

func readFile(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantNotReady checks a refusal with exit 1 whose last line names each of
// names.
func wantNotReady(t *testing.T, r fwtest.Result, names ...string) {
	t.Helper()
	if r.Code != 1 {
		t.Errorf("want exit 1, got %v", r)
	}
	last := fwtest.LastLine(r.Stderr)
	for _, n := range names {
		if !strings.Contains(last, n) {
			t.Errorf("the refusal does not name %q: %q", n, last)
		}
	}
}
