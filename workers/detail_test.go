package workers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/seat"
)

func TestReadWorktreeDetail(t *testing.T) {
	dir := testkit.Repo(t)
	wt, err := seat.Ensure(dir, "mid-1", "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		name := fmt.Sprintf("f%02d.txt", i)
		os.WriteFile(filepath.Join(wt.Path, name), []byte("x\n"), 0o644)
		testkit.Git(t, wt.Path, "add", name)
		testkit.Git(t, wt.Path, "commit", "-q", "-m", "commit "+name)
	}
	os.WriteFile(filepath.Join(wt.Path, "loose.txt"), []byte("y\n"), 0o644)
	if _, err := look.AssignPort(dir, "mid-1", look.PortRange{Lo: 47213, Hi: 47213}); err != nil {
		t.Fatal(err)
	}
	d, err := look.ReadWorktreeDetail(dir, "mid-1")
	if err != nil {
		t.Fatal(err)
	}
	if !d.Exists || d.Err != "" || d.Ahead != 12 || d.Behind != 0 || d.Base != "dev" || d.Port != 47213 || !d.Dirty {
		t.Fatalf("detail %+v", d)
	}
	if !strings.HasPrefix(d.Status, "## agent/mid-1") || !strings.Contains(d.Status, "?? loose.txt") || d.StatusErr != "" {
		t.Errorf("status %q (%s)", d.Status, d.StatusErr)
	}
	log := strings.Split(d.Log, "\n")
	if len(log) != 10 || !strings.HasSuffix(log[0], "commit f11.txt") || !strings.HasSuffix(log[9], "commit f02.txt") {
		t.Errorf("log is not the last ten commits, newest first:\n%s", d.Log)
	}

	// The folder went: the registry's entry is still described.
	os.RemoveAll(wt.Path)
	if d, err := look.ReadWorktreeDetail(dir, "mid-1"); err != nil || d.Exists || d.Path != wt.Path {
		t.Fatalf("gone worktree: %+v, %v", d, err)
	}
	if _, err := look.ReadWorktreeDetail(dir, "nobody"); err == nil {
		t.Fatal("an agent without a worktree has a detail")
	}
}

func TestReadWorkerDetail(t *testing.T) {
	dir := t.TempDir()
	if err := look.WriteState(dir, look.State{PID: 42, AgentID: "mid-1", Tier: "mid", State: look.StateRunning, Note: "running the executor",
		Started: look.Stamp{Time: time.Unix(1700000000, 0)}}); err != nil {
		t.Fatal(err)
	}
	logPath := look.LogPath(dir, "mid-1")
	var b strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&b, "2025-06-02T09:29:00.000Z out line %d\n", i)
	}
	b.WriteString("2025-06-02T09:29:00.000Z out bell \x07 here\n")
	os.MkdirAll(filepath.Dir(logPath), 0o755)
	if err := os.WriteFile(logPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	d := look.ReadWorkerDetail(dir, "mid-1")
	if d.StateErr != "" || d.StateMissing || d.State.PID != 42 || d.State.Note != "running the executor" || !strings.Contains(string(d.Raw), `"pid": 42`) {
		t.Fatalf("state: %+v", d)
	}
	if len(d.Log) != look.DetailLogLines || !strings.HasSuffix(d.Log[0], " line 102") || strings.Contains(d.Log[len(d.Log)-1], "\x07") {
		t.Fatalf("log: %d lines, first %q, last %q", len(d.Log), d.Log[0], d.Log[len(d.Log)-1])
	}

	// A field this version does not know is kept for the operator.
	os.WriteFile(look.StatePath(dir, "mid-1"), []byte(`{"pid": 7, "agent_id": "mid-1", "shiny": [1, 2]}`), 0o644)
	if d := look.ReadWorkerDetail(dir, "mid-1"); string(d.Fields["shiny"]) != "[1, 2]" || d.State.PID != 7 {
		t.Fatalf("extra field: %+v", d.Fields)
	}
	os.WriteFile(look.StatePath(dir, "mid-1"), []byte(`{"pid": "seven"`), 0o644)
	if d := look.ReadWorkerDetail(dir, "mid-1"); d.StateErr == "" || string(d.Raw) != `{"pid": "seven"` {
		t.Fatalf("corrupt state: %+v", d)
	}
	// A FIFO in place of either file is refused at once, not waited on.
	os.Remove(look.StatePath(dir, "mid-1"))
	os.Remove(logPath)
	syscall.Mkfifo(look.StatePath(dir, "mid-1"), 0o644)
	syscall.Mkfifo(logPath, 0o644)
	if d := look.ReadWorkerDetail(dir, "mid-1"); d.StateErr == "" || d.LogErr == "" {
		t.Fatalf("FIFOs: %+v", d)
	}
	if d := look.ReadWorkerDetail(dir, "nobody"); !d.StateMissing || !d.LogMissing || d.StateErr != "" || d.LogErr != "" {
		t.Fatalf("no files: %+v", d)
	}
}
