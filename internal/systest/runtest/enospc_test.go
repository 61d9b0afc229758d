package runtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// mountSmallTmpfs mounts a tmpfs of size bytes at a new folder, or skips the
// test saying why (mounting needs CAP_SYS_ADMIN).
func mountSmallTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs for a real ENOSPC (%v: %s)", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fillLeaving fills dir's filesystem with one-page files until it is full,
// then frees pages of them, so the next writes find exactly that much room.
func fillLeaving(t *testing.T, dir string, pages int) []string {
	t.Helper()
	page := make([]byte, os.Getpagesize())
	var fillers []string
	for i := 0; ; i++ {
		p := filepath.Join(dir, fmt.Sprintf("filler-%d", i))
		err := os.WriteFile(p, page, 0o644)
		if errors.Is(err, syscall.ENOSPC) {
			os.Remove(p)
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		fillers = append(fillers, p)
		if i > 100000 {
			t.Fatal("the tmpfs never filled up")
		}
	}
	for _, p := range fillers[len(fillers)-pages:] {
		os.Remove(p)
	}
	return fillers[:len(fillers)-pages]
}

// A claim that runs out of space after its move is undone at once: the plan
// is back in its lane, no lease of it is left, and it is claimable as soon as
// there is room again. Each amount of room left, from one page up, ends in a
// whole claim or none.
func TestClaimOnAFullDiskIsUndone(t *testing.T) {
	t.Parallel()
	undone := false
	for pages := 0; pages <= 6; pages++ {
		mnt := mountSmallTmpfs(t, 512<<10)
		dir := filepath.Join(mnt, "proj")
		if r := fwtest.Run(t, mnt, "scaffold", dir); r.Code != 0 {
			t.Fatalf("scaffold: %v", r)
		}
		fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "features/a.md"}, 0)
		// The worker's own files exist already, as on any second run.
		if r := fwtest.Run(t, dir, "work-once", "--agent-id", "w", "--tier", "small", "--slug", "none"); r.Code != fwtest.ExitNothing {
			t.Fatalf("first run: %v", r)
		}
		fillers := fillLeaving(t, mnt, pages)
		r := fwtest.Run(t, dir, "work-once", "--agent-id", "w")
		leases, _ := filepath.Glob(filepath.Join(dir, ".plans", ".leases", "*.json"))
		temps, _ := filepath.Glob(filepath.Join(dir, ".plans", ".leases", ".tmp-*"))
		switch {
		case r.Code == 0:
			if !fwtest.Exists(dir, "in-progress/a.md") || len(leases) != 1 {
				t.Fatalf("%d pages: a claim that succeeded left %v, leases %v", pages, r, leases)
			}
		default:
			lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
			if r.Code != fwtest.ExitError || !strings.HasPrefix(lines[len(lines)-1], "fleetwatch: features/a.md: ") {
				t.Errorf("%d pages: a failed claim is exit 2 with a last line naming the plan: %v", pages, r)
			}
			if !fwtest.Exists(dir, "features/a.md") || fwtest.Exists(dir, "in-progress/a.md") || len(leases) != 0 || len(temps) != 0 {
				t.Fatalf("%d pages: the failed claim left the plan or a lease behind: %v, leases %v, temps %v", pages, r, leases, temps)
			}
			undone = undone || strings.Contains(r.Stderr, "claim undone")
			for _, f := range fillers {
				os.Remove(f)
			}
			if r := fwtest.Run(t, dir, "work-once", "--agent-id", "w"); r.Code != 0 || !fwtest.Exists(dir, "in-progress/a.md") {
				t.Fatalf("%d pages: with room again the plan is claimable at once: %v", pages, r)
			}
		}
	}
	if !undone {
		t.Error("no amount of room made the claim fail after its move; the undo was not exercised")
	}
}
