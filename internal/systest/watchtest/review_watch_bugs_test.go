package watchtest

// Review findings for `fleetwatch watch` (install, uninstall, status). Each
// test fails on the code as reviewed and passes once the bug is fixed. They
// reuse watch_test.go's fake systemctl.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// --dry-run is "show what would change", but with a differing unit and no
// --yes it prints "would replace ..." and exits 0, while the same command
// without --dry-run refuses and writes nothing (exit 2). The /fleet-watch
// skill tells agents to show exactly this dry run before asking for consent.
func TestReviewInstallDryRunHidesRefusal(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t)
	fake := newFakeSystemd(t)
	exe := fwtest.Exe(t)
	if r := fwtest.RunEnv(t, dir, fake.env, "watch", "install", "--bin", exe, "--worker", "tier=mid,agent=mid-1,interval=5m"); r.Code != 0 {
		t.Fatalf("install: %v", r)
	}
	refused := fwtest.RunEnv(t, dir, fake.env, "watch", "install", "--bin", exe, "--worker", "tier=mid,agent=mid-1,interval=10m")
	if refused.Code != 2 {
		t.Fatalf("real install over a differing unit: %v", refused)
	}
	dry := fwtest.RunEnv(t, dir, fake.env, "watch", "install", "--dry-run", "--bin", exe, "--worker", "tier=mid,agent=mid-1,interval=10m")
	if dry.Code == 0 && strings.Contains(dry.Stdout, "would replace") && !strings.Contains(dry.Stdout+dry.Stderr, "--yes") {
		t.Errorf("dry run promises a replace the real run refuses (exit %d):\n%s", dry.Code, dry.Stdout)
	}
	// Fixed: the dry run refuses as the real run does, naming the unit and --yes.
	fwtest.OneLineError(t, dry, "would refuse", "-mid-1.timer", "--yes")
}

// Two projects with the same folder name get the same unit names. `--yes`
// on the second silently takes over the first project's worker: afterwards
// the first project's status shows no timers and its uninstall finds
// nothing, though nobody asked to remove its worker.
func TestReviewSameFolderNameProjectsStealUnits(t *testing.T) {
	t.Parallel()
	a := filepath.Join(fwtest.NewTree(t), "app")
	b := filepath.Join(fwtest.NewTree(t), "app")
	for _, p := range []string{a, b} {
		if r := fwtest.Run(t, t.TempDir(), "scaffold", p); r.Code != 0 {
			t.Fatalf("scaffold: %v", r)
		}
	}
	fake := newFakeSystemd(t)
	exe := fwtest.Exe(t)
	if r := fwtest.RunEnv(t, a, fake.env, "watch", "install", "--project", a, "--bin", exe, "--worker", "tier=mid,agent=mid-1"); r.Code != 0 {
		t.Fatalf("install a: %v", r)
	}
	timer := filepath.Join(fake.unit, "fleetwatch-app-mid-1.timer")
	before, err := os.ReadFile(timer)
	if err != nil {
		t.Fatal(err)
	}
	// The fix: another project's unit is never replaced, not even with
	// --yes, and the dry run says so too; one line names the unit and its
	// project, and nothing is written.
	for _, extra := range []string{"--yes", "--dry-run"} {
		r := fwtest.RunEnv(t, b, fake.env, "watch", "install", "--project", b, "--bin", exe, "--worker", "tier=mid,agent=mid-1", extra)
		fwtest.OneLineError(t, r, timer, "project "+a, "uninstall it there, or pick another agent id")
		if after, _ := os.ReadFile(timer); string(after) != string(before) {
			t.Errorf("install %s rewrote %s's unit", extra, a)
		}
	}
	if u := fwtest.RunEnv(t, a, fake.env, "watch", "uninstall", "--project", a, "--dry-run"); u.Code != 0 {
		t.Errorf("after installing project %s, project %s's watcher is gone (uninstall: exit %d, %s)", b, a, u.Code, strings.TrimSpace(u.Stderr))
	}
	// Another agent id installs beside it.
	if r := fwtest.RunEnv(t, b, fake.env, "watch", "install", "--project", b, "--bin", exe, "--worker", "tier=mid,agent=mid-2"); r.Code != 0 {
		t.Errorf("install with another agent id: %v", r)
	}
}

// When `systemctl --user disable --now` fails for a timer, uninstall still
// deletes that worker's unit files. The timer stays enabled and running in
// the user manager, and a retry says "no fleetwatch units" (exit 1):
// fleetwatch has lost track of a watcher that is still claiming plans.
func TestReviewUninstallKeepsUnitsWhenDisableFails(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t)
	fake := newFakeSystemd(t)
	if r := fwtest.RunEnv(t, dir, fake.env, "watch", "install", "--bin", fwtest.Exe(t), "--worker", "tier=mid,agent=mid-1"); r.Code != 0 {
		t.Fatalf("install: %v", r)
	}
	r := fwtest.RunEnv(t, dir, append(fake.env, "FAKE_SYSTEMD_FAIL=disable"), "watch", "uninstall")
	if r.Code != 2 {
		t.Fatalf("uninstall with a failing disable: %v", r)
	}
	fwtest.OneLineError(t, r, "systemctl --user disable --now", "-mid-1.timer", "kept", "rerun")
	retry := fwtest.RunEnv(t, dir, fake.env, "watch", "uninstall", "--dry-run")
	if retry.Code != 0 {
		t.Errorf("disable failed, yet the units were removed; a retry finds nothing (exit %d: %s)\nfirst run:\n%s", retry.Code, strings.TrimSpace(retry.Stderr), r.Stdout)
	}
}

// Without a reachable user manager, uninstall removes the unit files but not
// the timers.target.wants link that `systemctl --user enable` made (which
// works without a manager), leaving a dangling enablement behind.
func TestReviewOfflineUninstallLeavesEnablement(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t)
	fake := newFakeSystemd(t, "FAKE_SYSTEMD_STATE=offline")
	if r := fwtest.RunEnv(t, dir, fake.env, "watch", "install", "--bin", fwtest.Exe(t), "--worker", "tier=mid,agent=mid-1"); r.Code != 0 {
		t.Fatalf("install: %v", r)
	}
	timer := "fleetwatch-" + strings.ToLower(filepath.Base(dir)) + "-mid-1.timer"
	// The fix: install enables the timer (systemctl makes the link without a
	// manager), and uninstall disables it; where systemctl cannot, uninstall
	// removes the link itself. The fake makes no links, so the test does.
	if calls := fake.calls(t); !slices.Contains(calls, "--user enable "+timer) {
		t.Errorf("offline install did not enable %s: %q", timer, calls)
	}
	wants := filepath.Join(fake.unit, "timers.target.wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(wants, timer)
	if err := os.Symlink(filepath.Join(fake.unit, timer), link); err != nil {
		t.Fatal(err)
	}
	if r := fwtest.RunEnv(t, dir, fake.env, "watch", "uninstall"); r.Code != 0 {
		t.Fatalf("uninstall: %v", r)
	}
	if calls := fake.calls(t); !slices.Contains(calls, "--user disable "+timer) {
		t.Errorf("offline uninstall did not disable %s: %q", timer, calls)
	}
	if _, err := os.Lstat(link); err == nil {
		t.Errorf("uninstall left %s pointing at a removed unit", link)
	}
}

// The issue asks status for "each worker's last run from its state file":
// after the unit's own command has run and claimed a plan, status shows that
// run from the state file work-once wrote.
func TestReviewStatusRecordsTimerRuns(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/first.md"})
	fake := newFakeSystemd(t)
	if r := fwtest.RunEnv(t, dir, fake.env, "watch", "install", "--bin", fwtest.Exe(t), "--worker", "tier=mid,agent=mid-1"); r.Code != 0 {
		t.Fatalf("install: %v", r)
	}
	// What the service's ExecStart runs.
	if r := fwtest.RunEnv(t, dir, fake.env, "work-once", "--root", dir, "--once", "--agent-id", "mid-1", "--tier", "mid"); r.Code != 0 {
		t.Fatalf("work-once: %v", r)
	}
	r := fwtest.RunEnv(t, dir, fake.env, "watch", "status")
	if r.Code != 0 {
		t.Fatalf("status: %v", r)
	}
	if !strings.Contains(r.Stdout, "mid-1  exited, exit 0, plan in-progress/first.md") {
		t.Errorf("status does not show mid-1's run from its state file:\n%s", r.Stdout)
	}
}

// A project path no unit file can hold is reported as a --worker error
// ("--worker agent=mid-1: path ... starts or ends with ..."), naming the
// wrong flag.
func TestReviewProjectPathErrorNamesProject(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "app ")
	if r := fwtest.Run(t, t.TempDir(), "scaffold", dir); r.Code != 0 {
		t.Fatalf("scaffold: %v", r)
	}
	r := fwtest.RunEnv(t, dir, newFakeSystemd(t).env, "watch", "emit", "systemd", "--project", dir, "--bin", fwtest.Exe(t), "--worker", "tier=mid,agent=mid-1")
	if r.Code != 2 {
		t.Fatalf("emit: %v", r)
	}
	if strings.Contains(r.Stderr, "--worker") || !strings.Contains(r.Stderr, "--project") {
		t.Errorf("error should name --project, not --worker: %s", strings.TrimSpace(r.Stderr))
	}
	// And a binary path no unit can hold names --bin.
	ok := fwtest.NewTree(t)
	bin := filepath.Join(t.TempDir(), "fleetwatch ")
	if err := os.Symlink(fwtest.Exe(t), bin); err != nil {
		t.Fatal(err)
	}
	r = fwtest.RunEnv(t, ok, newFakeSystemd(t).env, "watch", "emit", "systemd", "--bin", bin, "--worker", "tier=mid,agent=mid-1")
	fwtest.OneLineError(t, r, "--bin")
	if strings.Contains(r.Stderr, "--worker") {
		t.Errorf("error should name --bin, not --worker: %s", strings.TrimSpace(r.Stderr))
	}
}
