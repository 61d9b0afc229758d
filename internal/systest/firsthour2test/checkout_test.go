package firsthour2test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// checkedOutDev is a landing project with dev checked out in its main
// checkout, as committing fleetwatch.yaml on the integration branch leaves
// it. With plans, .plans/ is committed on dev too (as the quick start says
// to), so each landing's plan move is a change of the checkout's own.
func checkedOutDev(t *testing.T, settings string, plans bool) string {
	t.Helper()
	dir := landkit.LandProject(t, settings)
	testkit.Git(t, dir, "checkout", "-q", "dev")
	if plans {
		landkit.Write(t, dir, ".gitignore", "var/\n")
		fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "features/later.md"}, 0)
	}
	testkit.Git(t, dir, "add", "-A")
	testkit.Git(t, dir, "commit", "-q", "-m", "the project's own files")
	return dir
}

// wantAtTip: HEAD is dev's tip and the index is its tree exactly; the
// work tree differs from it only under .plans/ (the plan moves the
// landing made).
func wantAtTip(t *testing.T, dir string, files ...string) {
	t.Helper()
	if head, tip := fwtest.GitOut(t, dir, "rev-parse", "HEAD"), fwtest.GitOut(t, dir, "rev-parse", "dev"); head != tip {
		t.Errorf("HEAD %s, dev %s", head, tip)
	}
	if _, err := landkit.GitCmd(dir, "diff-index", "--cached", "--quiet", "HEAD"); err != nil {
		st, _ := landkit.GitCmd(dir, "status", "--short")
		t.Errorf("the index is not dev's tip:\n%s", st)
	}
	st, _ := landkit.GitCmd(dir, "status", "--porcelain")
	for _, line := range strings.Split(st, "\n") {
		if line != "" && !strings.Contains(line, ".plans/") {
			t.Errorf("git status: %q", line)
		}
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s is not in the checkout: %v", f, err)
		}
	}
}

var fiveSlugs = []string{"a", "b", "c", "d", "e"}

// A landing, single or in a batch of four, brings a checkout of dev to
// its new tip: clean, or with changes of its own (the plan moves) that
// the landing does not touch, which stay as they were.
func TestLandBringsTheCheckoutAlong(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		settings string
		plans    bool
	}{
		{"single clean", landkit.PassCheck, false},
		{"batch clean", landkit.BatchCheck, false},
		{"single with plans committed", landkit.PassCheck, true},
		{"batch with plans committed", landkit.BatchCheck, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := checkedOutDev(t, tc.settings, tc.plans)
			for _, s := range fiveSlugs {
				landkit.Feature(t, dir, s, map[string]string{s + ".txt": s + "\n"})
			}
			if tc.plans {
				// The workers' plan moves, committed by a person.
				testkit.Git(t, dir, "add", "-A")
				testkit.Git(t, dir, "commit", "-q", "-m", "plan moves")
			}
			for _, s := range fiveSlugs {
				landkit.Queued(t, dir, s)
			}
			// Five changes: a batch of four, then one more, whose landing
			// finds the first's plan moves in the checkout.
			for range fiveSlugs {
				r := landkit.Land(t, dir, nil)
				if r.Code == 1 && strings.Contains(r.Stderr, "the queue is empty") {
					break
				}
				fwtest.Want(t, r, 0)
				if strings.Contains(r.Stderr, "warning") {
					t.Errorf("queue land warns: %s", r.Stderr)
				}
			}
			wantAtTip(t, dir, "a.txt", "b.txt", "c.txt", "d.txt", "e.txt")
			if !tc.plans {
				if st, _ := landkit.GitCmd(dir, "status", "--porcelain"); st != "" {
					t.Errorf("git status after landing on a clean checkout:\n%s", st)
				}
			}
		})
	}
}

// A checkout of dev whose own changes the landing would overwrite is
// never moved under: queue land refuses in one line naming the branch,
// the checkout and what to do, dev stays, and the change is kept.
func TestLandRefusesUnderLocalChanges(t *testing.T) {
	t.Parallel()
	for name, settings := range map[string]string{"single": landkit.PassCheck, "batch": landkit.BatchCheck} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := checkedOutDev(t, settings, false)
			landkit.Feature(t, dir, "a", map[string]string{"README": "theirs\n"})
			landkit.Queued(t, dir, "a")
			landkit.Write(t, dir, "README", "mine\n")
			before := fwtest.GitOut(t, dir, "rev-parse", "dev")
			r := landkit.Land(t, dir, nil)
			fwtest.OneLineError(t, r, "dev", dir, "README")
			if r.Code != 2 {
				t.Errorf("want exit 2, got %v", r)
			}
			if now := fwtest.GitOut(t, dir, "rev-parse", "dev"); now != before {
				t.Errorf("dev moved to %s under a checkout with changes", now)
			}
			if got := landkit.ReadFile(t, dir, "README"); got != "mine\n" {
				t.Errorf("the local change is lost: README %q", got)
			}
			// Once the change is out of the way, it lands.
			testkit.Git(t, dir, "checkout", "--", "README")
			fwtest.Want(t, landkit.Land(t, dir, nil), 0)
			wantAtTip(t, dir)
			if got := landkit.ReadFile(t, dir, "README"); got != "theirs\n" {
				t.Errorf("README %q after landing", got)
			}
		})
	}
}

// With dev tracking a remote where another machine landed meanwhile, the
// lander follows the remote and lands on top: the checkout of dev comes
// along through both moves.
func TestLandFollowsTheRemoteWithTheCheckout(t *testing.T) {
	t.Parallel()
	dir := checkedOutDev(t, landkit.PassCheck, false)
	remote := t.TempDir()
	testkit.Git(t, remote, "init", "-q", "--bare")
	testkit.Git(t, dir, "remote", "add", "origin", "file://"+remote)
	testkit.Git(t, dir, "push", "-q", "-u", "origin", "dev")
	other := filepath.Join(t.TempDir(), "other")
	testkit.Git(t, t.TempDir(), "clone", "-q", "-b", "dev", "file://"+remote, other)
	landkit.Write(t, other, "other.txt", "from elsewhere\n")
	testkit.Git(t, other, "add", "other.txt")
	testkit.Git(t, other, "commit", "-q", "-m", "elsewhere")
	testkit.Git(t, other, "push", "-q", "origin", "dev")

	landkit.Feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	landkit.Queued(t, dir, "a")
	r := landkit.Land(t, dir, nil)
	fwtest.Want(t, r, 0)
	if strings.Contains(r.Stderr, "warning") {
		t.Errorf("queue land warns: %s", r.Stderr)
	}
	wantAtTip(t, dir, "a.txt", "other.txt")
	if local, far := fwtest.GitOut(t, dir, "rev-parse", "dev"), fwtest.GitOut(t, remote, "rev-parse", "dev"); local != far {
		t.Errorf("the remote's dev is %s, the local %s", far, local)
	}
}
