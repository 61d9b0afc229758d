package main

// Review findings for `fleetwatch watch` (install, uninstall, status). Each
// test fails on the code as reviewed and passes once the bug is fixed. They
// reuse watch_test.go's fake systemctl.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --dry-run is "show what would change", but with a differing unit and no
// --yes it prints "would replace ..." and exits 0, while the same command
// without --dry-run refuses and writes nothing (exit 2). The /fleet-watch
// skill tells agents to show exactly this dry run before asking for consent.
func TestReviewInstallDryRunHidesRefusal(t *testing.T) {
	t.Parallel()
	dir := newTree(t)
	fake := newFakeSystemd(t)
	exe := testExe(t)
	if r := fwEnv(t, dir, fake.env, "watch", "install", "--bin", exe, "--worker", "tier=mid,agent=mid-1,interval=5m"); r.code != 0 {
		t.Fatalf("install: %v", r)
	}
	refused := fwEnv(t, dir, fake.env, "watch", "install", "--bin", exe, "--worker", "tier=mid,agent=mid-1,interval=10m")
	if refused.code != 2 {
		t.Fatalf("real install over a differing unit: %v", refused)
	}
	dry := fwEnv(t, dir, fake.env, "watch", "install", "--dry-run", "--bin", exe, "--worker", "tier=mid,agent=mid-1,interval=10m")
	if dry.code == 0 && strings.Contains(dry.stdout, "would replace") && !strings.Contains(dry.stdout+dry.stderr, "--yes") {
		t.Errorf("dry run promises a replace the real run refuses (exit %d):\n%s", dry.code, dry.stdout)
	}
}

// Two projects with the same folder name get the same unit names. `--yes`
// on the second silently takes over the first project's worker: afterwards
// the first project's status shows no timers and its uninstall finds
// nothing, though nobody asked to remove its worker.
func TestReviewSameFolderNameProjectsStealUnits(t *testing.T) {
	t.Parallel()
	a := filepath.Join(newTree(t), "app")
	b := filepath.Join(newTree(t), "app")
	for _, p := range []string{a, b} {
		if r := fw(t, t.TempDir(), "scaffold", p); r.code != 0 {
			t.Fatalf("scaffold: %v", r)
		}
	}
	fake := newFakeSystemd(t)
	exe := testExe(t)
	if r := fwEnv(t, a, fake.env, "watch", "install", "--project", a, "--bin", exe, "--worker", "tier=mid,agent=mid-1"); r.code != 0 {
		t.Fatalf("install a: %v", r)
	}
	r := fwEnv(t, b, fake.env, "watch", "install", "--project", b, "--bin", exe, "--worker", "tier=mid,agent=mid-1", "--yes")
	if r.code != 0 {
		return // refusing to take over another project's unit is a fix
	}
	if u := fwEnv(t, a, fake.env, "watch", "uninstall", "--project", a, "--dry-run"); u.code != 0 {
		t.Errorf("after installing project %s, project %s's watcher is gone (uninstall: exit %d, %s)", b, a, u.code, strings.TrimSpace(u.stderr))
	}
}

// When `systemctl --user disable --now` fails for a timer, uninstall still
// deletes that worker's unit files. The timer stays enabled and running in
// the user manager, and a retry says "no fleetwatch units" (exit 1):
// fleetwatch has lost track of a watcher that is still claiming plans.
func TestReviewUninstallKeepsUnitsWhenDisableFails(t *testing.T) {
	t.Parallel()
	dir := newTree(t)
	fake := newFakeSystemd(t)
	if r := fwEnv(t, dir, fake.env, "watch", "install", "--bin", testExe(t), "--worker", "tier=mid,agent=mid-1"); r.code != 0 {
		t.Fatalf("install: %v", r)
	}
	r := fwEnv(t, dir, append(fake.env, "FAKE_SYSTEMD_FAIL=disable"), "watch", "uninstall")
	if r.code != 2 {
		t.Fatalf("uninstall with a failing disable: %v", r)
	}
	retry := fwEnv(t, dir, fake.env, "watch", "uninstall", "--dry-run")
	if retry.code != 0 {
		t.Errorf("disable failed, yet the units were removed; a retry finds nothing (exit %d: %s)\nfirst run:\n%s", retry.code, strings.TrimSpace(retry.stderr), r.stdout)
	}
}

// Without a reachable user manager, uninstall removes the unit files but not
// the timers.target.wants link that `systemctl --user enable` made (which
// works without a manager), leaving a dangling enablement behind.
func TestReviewOfflineUninstallLeavesEnablement(t *testing.T) {
	t.Parallel()
	dir := newTree(t)
	fake := newFakeSystemd(t, "FAKE_SYSTEMD_STATE=offline")
	if r := fwEnv(t, dir, fake.env, "watch", "install", "--bin", testExe(t), "--worker", "tier=mid,agent=mid-1"); r.code != 0 {
		t.Fatalf("install: %v", r)
	}
	timer := "fleetwatch-" + strings.ToLower(filepath.Base(dir)) + "-mid-1.timer"
	wants := filepath.Join(fake.unit, "timers.target.wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(wants, timer)
	if err := os.Symlink(filepath.Join(fake.unit, timer), link); err != nil {
		t.Fatal(err)
	}
	if r := fwEnv(t, dir, fake.env, "watch", "uninstall"); r.code != 0 {
		t.Fatalf("uninstall: %v", r)
	}
	if _, err := os.Lstat(link); err == nil {
		t.Errorf("uninstall left %s pointing at a removed unit", link)
	}
}

// The issue asks status for "each worker's last run from its state file",
// but nothing in fleetwatch writes var/fleet/workers/<agent>.json: after the
// unit's own command has run and claimed a plan, status still says the
// installed worker has no runs recorded.
func TestReviewStatusRecordsTimerRuns(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "features/first.md"})
	fake := newFakeSystemd(t)
	if r := fwEnv(t, dir, fake.env, "watch", "install", "--bin", testExe(t), "--worker", "tier=mid,agent=mid-1"); r.code != 0 {
		t.Fatalf("install: %v", r)
	}
	// What the service's ExecStart runs.
	if r := fwEnv(t, dir, fake.env, "work-once", "--root", dir, "--once", "--agent-id", "mid-1", "--tier", "mid"); r.code != 0 {
		t.Fatalf("work-once: %v", r)
	}
	r := fwEnv(t, dir, fake.env, "watch", "status")
	if r.code != 0 {
		t.Fatalf("status: %v", r)
	}
	if strings.Contains(r.stdout, "mid-1  no runs recorded") {
		t.Errorf("mid-1 ran and claimed a plan, status says otherwise:\n%s", r.stdout)
	}
}

// A project path no unit file can hold is reported as a --worker error
// ("--worker agent=mid-1: path ... starts or ends with ..."), naming the
// wrong flag.
func TestReviewProjectPathErrorNamesProject(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "app ")
	if r := fw(t, t.TempDir(), "scaffold", dir); r.code != 0 {
		t.Fatalf("scaffold: %v", r)
	}
	r := fwEnv(t, dir, newFakeSystemd(t).env, "watch", "emit", "systemd", "--project", dir, "--bin", testExe(t), "--worker", "tier=mid,agent=mid-1")
	if r.code != 2 {
		t.Fatalf("emit: %v", r)
	}
	if strings.Contains(r.stderr, "--worker") || !strings.Contains(r.stderr, "--project") {
		t.Errorf("error should name --project, not --worker: %s", strings.TrimSpace(r.stderr))
	}
}
