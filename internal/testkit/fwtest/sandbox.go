package fwtest

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

// NeedLandlock skips a test that needs Landlock at ABI minABI or newer
// (0: any fleetwatch contains agents with) where the kernel lacks it,
// except in CI, whose machines have it: there a skip would hide a broken
// sandbox.
func NeedLandlock(t testing.TB, minABI int) {
	t.Helper()
	abi, err := sandbox.ABI()
	if err == nil && abi < minABI {
		err = fmt.Errorf("the kernel's Landlock ABI %d is older than %d", abi, minABI)
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs the sandbox tests, but %v", err)
		}
		t.Skipf("no sandbox here: %v", err)
	}
}

var (
	programs    sync.Map // package folder → func() (string, error)
	programDirs sync.Map // folders of this kit's own (sharedExe's)
)

// removePrograms removes what Program built, and sharedExe's copy.
func removePrograms() {
	testkit.RemovePrograms()
	programDirs.Range(func(dir, _ any) bool {
		os.RemoveAll(dir.(string))
		return true
	})
}

// Program is the test's own program in pkg (a folder like
// "./testdata/hostile", relative to the test's package), built once per
// test binary and linked again only when its sources changed
// (testkit.BuildProgram).
func Program(t testing.TB, pkg string) string {
	t.Helper()
	build, _ := programs.LoadOrStore(pkg, sync.OnceValues(func() (string, error) {
		return testkit.BuildProgram(pkg, "")
	}))
	bin, err := build.(func() (string, error))()
	if err != nil {
		t.Fatalf("building %s: %v", pkg, err)
	}
	return bin
}

// NeedCgroup skips a test that needs each run bounded and frozen as a
// whole (a cgroup this user may make, with pids and memory controllers
// and a freezer) where the machine lacks it, except in CI, whose machines
// have it.
func NeedCgroup(t testing.TB) {
	t.Helper()
	g, err := sandbox.NewGroup(sandbox.GroupName(t.TempDir(), "probe"), sandbox.DefaultLimits())
	if err == nil {
		defer g.Close()
		if missing := g.Unbounded(); missing != "" {
			err = fmt.Errorf("cgroups here hold %s, but %s", g.Held(), missing)
		}
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs the cgroup tests, but %v", err)
		}
		t.Skipf("no bounded cgroup here: %v", err)
	}
}
