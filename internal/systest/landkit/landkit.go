// Package landkit is the shared kit of the landing's whole-program tests
// (landtest, reviewtest, gatetest, queuetest, batchtest, batchkilltest): a
// project on real git with an integration branch dev, feature branches made
// in throwaway worktrees, and the queue driven through the fleetwatch binary.
package landkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// PassCheck is a required check that passes unless the tree holds a file
// named bad; BatchCheck the same with batches of four.
const (
	PassCheck  = "checks:\n  - {name: test, run: [sh, -c, 'test ! -f bad']}\n"
	BatchCheck = PassCheck + "queue: {batch: 4}\n"
)

// LandProject is a git project whose fleetwatch.yaml, committed, says
// settings (the integration branch is dev, made from main): checks gate
// only as committed on dev.
func LandProject(t *testing.T, settings string) string {
	t.Helper()
	dir := fwtest.GitProject(t)
	Write(t, dir, "fleetwatch.yaml", "integration: dev\n"+settings)
	Write(t, dir, "README", "base\nline two\nline three\n")
	Write(t, dir, ".gitignore", "var/\n.plans/\n")
	testkit.Git(t, dir, "add", "README", ".gitignore", "fleetwatch.yaml")
	testkit.Git(t, dir, "commit", "-q", "-m", "base")
	testkit.Git(t, dir, "branch", "dev")
	return dir
}

func Write(t *testing.T, dir, rel, content string) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Feature puts slug's plan in review-needed/ and commits files on
// Feature/<slug> from dev (or on top of the branch when it exists); it
// returns the new tip. The commit is made by one git fast-import, as t
// (the identity testkit.Git commits as), where a worktree would take
// seven git processes.
func Feature(t *testing.T, dir, slug string, files map[string]string) string {
	t.Helper()
	if !fwtest.Exists(dir, "review-needed/"+slug+".md") {
		fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "review-needed/" + slug + ".md"}, 0)
	}
	branch := "feature/" + slug
	from := "refs/heads/dev^0"
	if HasBranch(t, dir, branch) {
		from = "refs/heads/" + branch + "^0"
	}
	var in bytes.Buffer
	who := fmt.Sprintf("t <t@example.com> %d +0000", time.Now().Unix())
	msg := slug + ": change\n"
	fmt.Fprintf(&in, "commit refs/heads/%s\nmark :1\nauthor %s\ncommitter %s\ndata %d\n%sfrom %s\n", branch, who, who, len(msg), msg, from)
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(&in, "M 100644 inline %s\ndata %d\n%s\n", rel, len(files[rel]), files[rel])
	}
	in.WriteString("\nget-mark :1\n")
	cmd := osexec.Command("git", "-C", dir, "fast-import", "--quiet", "--cat-blob-fd=1")
	cmd.Stdin = &in
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git fast-import of %s: %v\n%s", branch, err, out)
	}
	return strings.TrimSpace(string(out))
}

func HasBranch(t *testing.T, dir, branch string) bool {
	return strings.TrimSpace(testkit.Git(t, dir, "branch", "--list", branch)) != ""
}

// Approve is a person's approve through the review command.
func Approve(t *testing.T, dir, slug string) {
	t.Helper()
	fwtest.Want(t, fwtest.Run(t, dir, "review", slug, "--approve"), 0)
}

// Queued approves slug and adds it to the queue.
func Queued(t *testing.T, dir, slug string) {
	t.Helper()
	Approve(t, dir, slug)
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "add", slug), 0)
}

// Listing is `queue list --json`, decoded.
type Listing struct {
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

func List(t *testing.T, dir string) Listing {
	t.Helper()
	r := fwtest.Run(t, dir, "queue", "list", "--json")
	fwtest.Want(t, r, 0)
	var l Listing
	if err := json.Unmarshal([]byte(r.Stdout), &l); err != nil {
		t.Fatalf("queue list --json: %v\n%s", err, r.Stdout)
	}
	return l
}

// StateOf is slug's state and reason in the Listing.
func StateOf(t *testing.T, dir, slug string) (string, string) {
	t.Helper()
	for _, it := range List(t, dir).Items {
		if it.Slug == slug {
			return it.State, it.Why
		}
	}
	t.Fatalf("%s not in queue list", slug)
	return "", ""
}

// Land runs queue land --yes with extra flags.
func Land(t *testing.T, dir string, env []string, flags ...string) fwtest.Result {
	t.Helper()
	return fwtest.RunEnv(t, dir, env, append([]string{"queue", "land", "--yes"}, flags...)...)
}

// WantLanded checks slug landed once: its tip is in dev, the plan is in
// completed/, the ref is pinned and the queue no longer has it.
func WantLanded(t *testing.T, dir, slug, tip string) {
	t.Helper()
	if _, err := GitCmd(dir, "merge-base", "--is-ancestor", tip, "dev"); err != nil {
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
	for _, it := range List(t, dir).Items {
		if it.Slug == slug && it.Position != nil {
			t.Errorf("%s still queued at %d", slug, *it.Position)
		}
	}
}

// GitCmd is git in dir, its error an answer (merge-base --is-ancestor).
func GitCmd(dir string, args ...string) (string, error) {
	out, err := osexec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	return strings.TrimSpace(string(out)), err
}

func ReadFile(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// WantNotReady checks a refusal with exit 1 whose last line names each of
// names.
func WantNotReady(t *testing.T, r fwtest.Result, names ...string) {
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

// FourChanges queues a, b, c and d, each adding its own file, with
// files["b"] replacing b's when given; it returns the tips.
func FourChanges(t *testing.T, dir string, files map[string]map[string]string) map[string]string {
	t.Helper()
	tips := map[string]string{}
	for _, s := range []string{"a", "b", "c", "d"} {
		f := files[s]
		if f == nil {
			f = map[string]string{s + ".txt": s + "\n"}
		}
		tips[s] = Feature(t, dir, s, f)
		Queued(t, dir, s)
	}
	return tips
}

// DevMoves is how many times dev moved since it was made.
func DevMoves(t *testing.T, dir string) int {
	t.Helper()
	return len(strings.Split(fwtest.GitOut(t, dir, "reflog", "--format=%H", "refs/heads/dev"), "\n")) - 1
}

// RaceLanders starts two queue lands at once, round after round, until
// both find the queue empty; each must land, be refused as the second
// lander, or find nothing.
func RaceLanders(t *testing.T, dir string) {
	t.Helper()
	for round := 0; round < 3; round++ {
		var cmds [2]*osexec.Cmd
		var errs [2]bytes.Buffer
		for i := range cmds {
			cmds[i] = fwtest.Cmd(dir, nil, "queue", "land", "--yes")
			cmds[i].Stderr = &errs[i]
			if err := cmds[i].Start(); err != nil {
				t.Fatal(err)
			}
		}
		empty := 0
		for i, c := range cmds {
			err := c.Wait()
			code := c.ProcessState.ExitCode()
			switch {
			case err == nil:
			case code == 1 && strings.Contains(errs[i].String(), "empty"):
				empty++
			case code == 2 && strings.Contains(errs[i].String(), "another queue land"):
			default:
				t.Fatalf("lander %d: exit %d: %s", i, code, errs[i].String())
			}
		}
		if empty == 2 {
			return
		}
	}
}

// WantEveryMoveChecked: every commit dev was swapped to has a passing
// result for its exact tree.
func WantEveryMoveChecked(t *testing.T, dir string) {
	t.Helper()
	moves := strings.Split(fwtest.GitOut(t, dir, "reflog", "--format=%H", "refs/heads/dev"), "\n")
	for _, c := range moves[:len(moves)-1] {
		tree := fwtest.GitOut(t, dir, "rev-parse", c+"^{tree}")
		hits, _ := filepath.Glob(filepath.Join(dir, "var/fleet/checks", tree, "test-*.json"))
		ok := false
		for _, h := range hits {
			if b, _ := os.ReadFile(h); !strings.HasSuffix(h, ".retry.json") && strings.Contains(string(b), `"result": "pass"`) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("dev moved to %s, whose tree %s has no pass", c, tree)
		}
	}
}

// WantNoNotice: queue list reports no move outside the queue.
func WantNoNotice(t *testing.T, dir string) {
	t.Helper()
	r := fwtest.Run(t, dir, "queue", "list", "--json")
	var l struct {
		Notices []string `json:"notices"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &l); err != nil || len(l.Notices) != 0 {
		t.Errorf("queue list notices %v (%v)", l.Notices, err)
	}
}

// BatchView is the batch part of queue list --json.
type BatchView struct {
	Slugs     []string `json:"slugs"`
	Candidate string   `json:"candidate"`
	Checks    []struct {
		Name   string `json:"name"`
		Result string `json:"result"`
		Flaky  bool   `json:"flaky"`
	} `json:"checks"`
	Retried   bool `json:"retried"`
	Bisection *struct {
		Passing int    `json:"passing"`
		Failing int    `json:"failing"`
		Culprit string `json:"culprit"`
	} `json:"bisection"`
}

// BatchOf is the batch `queue list --json` shows.
func BatchOf(t *testing.T, dir string) BatchView {
	t.Helper()
	r := fwtest.Run(t, dir, "queue", "list", "--json")
	fwtest.Want(t, r, 0)
	var l struct {
		Batch *BatchView `json:"batch"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &l); err != nil {
		t.Fatal(err)
	}
	if l.Batch == nil {
		return BatchView{}
	}
	return *l.Batch
}
