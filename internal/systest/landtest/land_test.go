package landtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

func TestNothingLandsWithoutApprove(t *testing.T) {
	t.Parallel()
	dir := landProject(t, passCheck)
	feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	r := fwtest.Run(t, dir, "queue", "add", "a")
	fwtest.Want(t, r, 2)
	fwtest.OneLineError(t, r, "not approved")
	if st, _ := stateOf(t, dir, "a"); st != "needs review" {
		t.Errorf("unapproved a is %q", st)
	}
	r = land(t, dir, nil)
	fwtest.Want(t, r, 1)
	if !strings.Contains(r.Stderr, "empty") {
		t.Errorf("land on an empty queue: %v", r)
	}
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "add", "nope"), 2)
}

func TestLandMovesIntegrationByCASAndPlanToCompleted(t *testing.T) {
	t.Parallel()
	dir := landProject(t, passCheck)
	tip := feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	old := fwtest.GitOut(t, dir, "rev-parse", "dev")
	approve(t, dir, "a")
	if st, why := stateOf(t, dir, "a"); st != "approved" {
		t.Errorf("approved, not queued a is %q (%s)", st, why)
	}
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "add", "a"), 0)
	r := fwtest.Run(t, dir, "queue", "add", "a")
	fwtest.Want(t, r, 2)
	fwtest.OneLineError(t, r, "already queued")
	l := list(t, dir)
	if len(l.Items) != 1 || l.Items[0].State != "queued" || l.Items[0].Position == nil || *l.Items[0].Position != 1 ||
		l.Items[0].Commit != tip || l.Items[0].Ahead != 1 || l.Items[0].ApprovedBy == "" || len(l.Items[0].Checks) != 1 ||
		l.Items[0].Checks[0].Result != "missing" {
		t.Fatalf("queued a: %+v", l.Items)
	}
	r = land(t, dir, nil)
	fwtest.Want(t, r, 0)
	wantLanded(t, dir, "a", tip)
	if parents := fwtest.GitOut(t, dir, "log", "-1", "--format=%P", "dev"); parents != old+" "+tip {
		t.Errorf("dev's parents are %q, want %s %s", parents, old, tip)
	}
	if got := fwtest.GitOut(t, dir, "show", "dev:a.txt"); got != "a" {
		t.Errorf("dev:a.txt = %q", got)
	}
	if !strings.Contains(fwtest.GitOut(t, dir, "log", "-1", "--format=%s", "dev"), "a") {
		t.Errorf("the candidate's message does not name the slug")
	}
	if l := list(t, dir); len(l.Items) != 0 {
		t.Errorf("landed a is still listed (its plan is in completed/): %+v", l.Items)
	}
}

func TestFailingAndUngatedHeadsRefused(t *testing.T) {
	t.Parallel()
	t.Run("failing", func(t *testing.T) {
		t.Parallel()
		dir := landProject(t, passCheck)
		feature(t, dir, "bad", map[string]string{"bad": "x\n"})
		queued(t, dir, "bad")
		old := fwtest.GitOut(t, dir, "rev-parse", "dev")
		r := land(t, dir, nil)
		fwtest.Want(t, r, 1)
		if !strings.Contains(r.Stderr, "test failed") || !strings.Contains(r.Stderr, "var/fleet/checks") {
			t.Errorf("a failing head's refusal names neither the check nor its log: %v", r)
		}
		if now := fwtest.GitOut(t, dir, "rev-parse", "dev"); now != old {
			t.Errorf("dev moved to %s", now)
		}
		if st, why := stateOf(t, dir, "bad"); st != "failed" || !strings.Contains(why, "test") {
			t.Errorf("bad is %q (%s)", st, why)
		}
	})
	t.Run("ungated", func(t *testing.T) {
		t.Parallel()
		dir := landProject(t, "")
		tip := feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
		queued(t, dir, "a")
		if st, why := stateOf(t, dir, "a"); st != "queued" || !strings.Contains(why, "--ungated") {
			t.Errorf("ungated a is %q (%s)", st, why)
		}
		wantNotReady(t, land(t, dir, nil), "ungated", "--ungated")
		fwtest.Want(t, land(t, dir, nil, "--ungated"), 0)
		wantLanded(t, dir, "a", tip)
	})
	t.Run("agent", func(t *testing.T) {
		t.Parallel()
		dir := landProject(t, passCheck)
		feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
		queued(t, dir, "a")
		r := land(t, dir, []string{"FLEET_AGENT_ID=w1"})
		fwtest.Want(t, r, 2)
		fwtest.OneLineError(t, r, "person")
	})
}

func TestConflictAfterLandingThenSendBack(t *testing.T) {
	t.Parallel()
	dir := landProject(t, passCheck)
	a := feature(t, dir, "a", map[string]string{"README": "base\nA's line\nline three\n"})
	b := feature(t, dir, "b", map[string]string{"README": "base\nB's line\nline three\n", "b.txt": "b\n"})
	queued(t, dir, "a")
	queued(t, dir, "b")
	fwtest.Want(t, land(t, dir, nil), 0)
	wantLanded(t, dir, "a", a)
	l := list(t, dir)
	if len(l.Items) != 1 || l.Items[0].Slug != "b" || l.Items[0].State != "conflict" ||
		strings.Join(l.Items[0].ConflictPaths, ",") != "README" || l.Items[0].Behind != 2 {
		t.Fatalf("b after a landed: %+v", l.Items)
	}
	wantNotReady(t, land(t, dir, nil), "README", "send-back")

	r := fwtest.Run(t, dir, "queue", "send-back", "b", "--note", "rebase onto dev")
	fwtest.Want(t, r, 0)
	if fwtest.Exists(dir, "review-needed/b.md") || !fwtest.Exists(dir, "features/b.md") {
		t.Fatalf("b not sent back to features/: %v", r)
	}
	text := fwtest.ReadRel(t, dir, "features/b.md")
	if !strings.Contains(text, "## Review notes") || !strings.Contains(text, "README") || !strings.Contains(text, "rebase onto dev") {
		t.Errorf("b's review notes:\n%s", text)
	}
	if got := fwtest.GitOut(t, dir, "rev-parse", "feature/b"); got != b {
		t.Errorf("feature/b moved to %s, want %s", got, b)
	}
	if l := list(t, dir); len(l.Items) != 0 {
		t.Errorf("queue after send-back: %+v", l.Items)
	}
}

func TestCommitAfterApproveIsStale(t *testing.T) {
	t.Parallel()
	dir := landProject(t, passCheck)
	feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	queued(t, dir, "a")
	feature(t, dir, "a", map[string]string{"a.txt": "a, changed after review\n"})
	if st, _ := stateOf(t, dir, "a"); st != "stale" {
		t.Errorf("a moved after approve is %q", st)
	}
	old := fwtest.GitOut(t, dir, "rev-parse", "dev")
	wantNotReady(t, land(t, dir, nil), "review it again")
	if now := fwtest.GitOut(t, dir, "rev-parse", "dev"); now != old {
		t.Errorf("a stale head landed: dev is %s", now)
	}
}

func TestCheckoutOfIntegration(t *testing.T) {
	t.Parallel()
	for _, dirty := range []bool{false, true} {
		name := "clean"
		if dirty {
			name = "dirty"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := landProject(t, passCheck)
			fwtest.GitOut(t, dir, "checkout", "-q", "dev")
			tip := feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
			queued(t, dir, "a")
			if dirty {
				write(t, dir, "README", "my own edit\n")
			}
			r := land(t, dir, nil)
			fwtest.Want(t, r, 0)
			wantLanded(t, dir, "a", tip)
			_, err := os.Stat(filepath.Join(dir, "a.txt"))
			got := err == nil
			// An edit of the checkout's own that the landing does not
			// touch is kept, as git checkout keeps it (firsthour2test:
			// one it would overwrite refuses the landing).
			if dirty && readFile(t, dir, "README") != "my own edit\n" {
				t.Errorf("the checkout's own edit is lost: %v", r)
			}
			if dirty {
				fwtest.GitOut(t, dir, "checkout", "--", "README")
			}
			if !got || strings.Contains(r.Stderr, "warning") {
				t.Errorf("the clean checkout of dev was not brought up to date: %v", r)
			}
			if st := fwtest.GitOut(t, dir, "status", "--porcelain", "--untracked-files=no"); st != "" {
				t.Errorf("the checkout is not clean after the landing: %s", st)
			}
		})
	}
}

func TestRemoteIntegration(t *testing.T) {
	t.Parallel()
	dir := landProject(t, passCheck)
	remote := t.TempDir()
	fwtest.GitOut(t, remote, "init", "-q", "--bare")
	fwtest.GitOut(t, dir, "remote", "add", "origin", "file://"+remote)
	fwtest.GitOut(t, dir, "push", "-q", "-u", "origin", "dev")
	tip := feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	queued(t, dir, "a")
	fwtest.Want(t, land(t, dir, nil), 0)
	wantLanded(t, dir, "a", tip)
	if local, far := fwtest.GitOut(t, dir, "rev-parse", "dev"), fwtest.GitOut(t, remote, "rev-parse", "dev"); local != far {
		t.Errorf("the remote's dev is %s, the local %s", far, local)
	}

	// Another machine lands on the remote meanwhile: the push's lease
	// fails, the lander follows the remote and lands on top of it.
	other := filepath.Join(t.TempDir(), "other")
	fwtest.GitOut(t, t.TempDir(), "clone", "-q", "-b", "dev", "file://"+remote, other)
	write(t, other, "other.txt", "from elsewhere\n")
	fwtest.GitOut(t, other, "add", "other.txt")
	fwtest.GitOut(t, other, "-c", "user.name=o", "-c", "user.email=o@example.com", "commit", "-q", "-m", "elsewhere")
	fwtest.GitOut(t, other, "push", "-q", "origin", "dev")
	elsewhere := fwtest.GitOut(t, other, "rev-parse", "HEAD")
	b := feature(t, dir, "b", map[string]string{"b.txt": "b\n"})
	queued(t, dir, "b")
	fwtest.Want(t, land(t, dir, nil), 0)
	wantLanded(t, dir, "b", b)
	far := fwtest.GitOut(t, remote, "rev-parse", "dev")
	if _, err := gitCmd(remote, "merge-base", "--is-ancestor", elsewhere, far); err != nil || far != fwtest.GitOut(t, dir, "rev-parse", "dev") {
		t.Errorf("the remote's dev %s lost %s or differs from the local", far, elsewhere)
	}
}

// The author's worktree is released only once the landing is verified; one
// with work of its own is kept with a warning. The branch stays either way.
func TestLandReleasesTheAuthorsWorktree(t *testing.T) {
	t.Parallel()
	for _, dirty := range []bool{false, true} {
		t.Run(map[bool]string{false: "clean", true: "dirty"}[dirty], func(t *testing.T) {
			t.Parallel()
			dir := landProject(t, passCheck)
			fwtest.Want(t, fwtest.Run(t, dir, "worktree", "ensure", "--agent-id", "w1", "--slug", "a", "--root", dir), 0)
			wt := filepath.Join(dir, "var", "worktrees", "w1")
			write(t, wt, "a.txt", "a\n")
			fwtest.GitOut(t, wt, "add", "a.txt")
			fwtest.GitOut(t, wt, "-c", "user.name=w1", "-c", "user.email=w1@example.com", "commit", "-q", "-m", "a")
			tip := fwtest.GitOut(t, wt, "rev-parse", "HEAD")
			fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "review-needed/a.md"}, 0)
			// The run that finished it, as the driver logs it.
			write(t, dir, ".plans/logs/events.jsonl", `{"ts":"2026-01-01T00:00:00Z","event":"complete","slug":"a","from":"in-progress/a.md","to":"review-needed/a.md","agent_id":"w1"}`+"\n")
			queued(t, dir, "a")
			if dirty {
				write(t, wt, "notes.txt", "mine\n")
			}
			r := land(t, dir, nil)
			fwtest.Want(t, r, 0)
			wantLanded(t, dir, "a", tip)
			_, err := os.Stat(wt)
			if dirty != (err == nil) || dirty != strings.Contains(r.Stderr, "warning: w1's worktree") {
				t.Errorf("dirty=%v: worktree there: %v; %v", dirty, err == nil, r)
			}
			if got := fwtest.GitOut(t, dir, "rev-parse", "feature/a"); got != tip {
				t.Errorf("feature/a is %s, want %s", got, tip)
			}
		})
	}
}
