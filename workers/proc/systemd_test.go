package proc

import (
	"os"
	"path/filepath"
	"testing"
)

// planInstall names the project a unit it would replace was written for,
// so install can refuse to take over another project's worker.
func TestPlanInstallOwner(t *testing.T) {
	dir := t.TempDir()
	iv, _ := parseInterval("5m")
	theirs, err := Units("/usr/local/bin/fleetwatch", "/a/app", Spec{Agent: "mid-1", Tier: "mid", Interval: iv})
	if err != nil {
		t.Fatal(err)
	}
	if err := writeUnits(dir, theirs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch-app-hand.timer"), []byte("[Timer]\nOnCalendar=daily\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ours, _ := Units("/usr/local/bin/fleetwatch", "/b/app", Spec{Agent: "mid-1", Tier: "mid", Interval: iv})
	ours = append(ours, Unit{Name: "fleetwatch-app-hand.timer", Text: "mine"}, Unit{Name: "fleetwatch-app-new.timer", Text: "new"})
	changes, err := planInstall(dir, ours)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{filepath.Join(dir, ours[0].Name), Replace, "/a/app"},
		{filepath.Join(dir, ours[1].Name), Replace, "/a/app"},
		{filepath.Join(dir, "fleetwatch-app-hand.timer"), Replace, ""},
		{filepath.Join(dir, "fleetwatch-app-new.timer"), Create, ""},
	}
	for i, c := range changes {
		if c != want[i] {
			t.Errorf("change %d = %+v, want %+v", i, c, want[i])
		}
	}
}

// Unlink removes the enablement link a timer left, and nothing else.
func TestUnlink(t *testing.T) {
	dir := t.TempDir()
	wants := filepath.Join(dir, "timers.target.wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "fleetwatch-app-a.timer"), filepath.Join(wants, "fleetwatch-app-a.timer")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wants, "fleetwatch-app-b.timer"), []byte("not a link\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fleetwatch-app-a.timer", "fleetwatch-app-b.timer", "fleetwatch-app-none.timer"} {
		if err := unlink(dir, name); err != nil {
			t.Errorf("Unlink(%s): %v", name, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(wants, "fleetwatch-app-a.timer")); err == nil {
		t.Error("the link is still there")
	}
	if _, err := os.Stat(filepath.Join(wants, "fleetwatch-app-b.timer")); err != nil {
		t.Errorf("a file that is not a link was removed: %v", err)
	}
	if err := unlink(filepath.Join(dir, "missing"), "x.timer"); err != nil {
		t.Errorf("no wants folder: %v", err)
	}
}
