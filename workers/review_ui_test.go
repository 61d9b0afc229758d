package workers

// Review findings for what the UI's Workers pane, spawn form, stop and log
// panes rely on. Each test fails on the code as reviewed and passes once
// the problem is fixed.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails when it does not return in 5 s: the caller
// would block for good.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: still blocked after 5 s", what)
	}
}

// A FIFO among the state files made ReadStates block in open(2) until
// someone wrote to it: the UI's Workers pane stopped refreshing for good
// (its one reading never came back), the spawn form never opened
// (UniqueAgentID reads the states) and `watch status` hung. A state file
// far larger than any real one (a few hundred bytes) was read and parsed
// in full on every refresh, a second a time while workers run.
func TestReviewReadStatesSkipsFIFOsAndHugeFiles(t *testing.T) {
	t.Parallel()
	project := fakeProject(t)
	dir := filepath.Join(project, filepath.FromSlash(StateDir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	huge := `{"agent_id":"huge","note":"` + strings.Repeat("x", 8<<20) + `"}`
	if err := os.WriteFile(filepath.Join(dir, "huge.json"), []byte(huge), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteState(project, State{AgentID: "mid-1", PID: 1, State: StateRunning}); err != nil {
		t.Fatal(err)
	}
	var states []State
	var problems []string
	within(t, "ReadStates with a FIFO among the state files", func() { states, problems = ReadStates(project) })
	if len(states) != 1 || states[0].AgentID != "mid-1" {
		t.Errorf("states %+v", states)
	}
	joined := strings.Join(problems, "\n")
	if len(problems) != 2 || !strings.Contains(joined, "pipe.json: not a regular file") || !strings.Contains(joined, "huge.json: ") {
		t.Errorf("problems %q", problems)
	}
	within(t, "UniqueAgentID with a FIFO among the state files", func() { UniqueAgentID(project, "ui-mid") })
}

// TailLog opened the log with a blocking open(2): a FIFO at the log's path
// kept the UI's log pane at "opening…" for good, with a goroutine nobody
// could stop.
func TestReviewTailLogOfAFIFODoesNotBlock(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "logs", "mid-1.log")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	var tl *Tail
	var err error
	within(t, "TailLog of a FIFO", func() { tl, err = TailLog(path, 10) })
	if err == nil {
		defer tl.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("TailLog of a FIFO: %v", err)
	}
}

// Stop trusted any live process whose command line says work-once. After
// a reboot, or a kill -9 that left a state file saying running, the pid
// may belong to another worker's work-once by now: x on the dead worker
// sent SIGTERM to a live one, which released its plan. A process that
// started after the worker did cannot be it.
func TestReviewStopRefusesAPidReusedByAnotherWorker(t *testing.T) {
	t.Parallel()
	project := fakeProject(t)
	configure(t, project, "mid-2", "sleep=30s\nstate=1\n")
	c := start(t, SpawnSpec{Project: project, Agent: "mid-2", Tier: "mid"})
	eventually(t, "mid-2 wrote its state", func() bool {
		states, _ := ReadStates(project)
		return len(states) == 1
	})
	// mid-1's driver died an hour ago without a word; its pid is mid-2's now.
	gone := State{AgentID: "mid-1", PID: c.State.PID, Host: hostname(), State: StateRunning,
		Started: Stamp{time.Now().Add(-time.Hour)}, LastHeartbeat: Stamp{time.Now().Add(-time.Hour)}, HeartbeatEvery: 30}
	err := Stop(gone)
	if err == nil || !strings.Contains(err.Error(), "pid was reused") || strings.Contains(err.Error(), "\n") {
		t.Errorf("stop of mid-1 whose pid is mid-2's now: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	if got := readFile(filepath.Join(project, ".fake", "mid-2.term")); got != "" {
		t.Errorf("mid-2 got %s meant for mid-1", got)
	}
	// mid-2's own state file still stops mid-2.
	states, _ := ReadStates(project)
	if err := Stop(states[0]); err != nil {
		t.Fatal(err)
	}
	eventually(t, "mid-2 got SIGTERM", func() bool { return readFile(filepath.Join(project, ".fake", "mid-2.term")) == "SIGTERM" })
}

// TailLog watched the log's folder alone. When the folder went (rm -rf
// var/, git clean -fdx; var/ is git-ignored) and came back, the watch
// was gone with it: the pane still said "following" and never showed
// another line, though the next worker wrote to the same path.
func TestReviewTailLogFollowsThroughItsFolderComingBack(t *testing.T) {
	t.Parallel()
	project := fakeProject(t)
	path := LogPath(project, "mid-1")
	tl, err := TailLog(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	// The tail made nothing: the worker makes its folder.
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Fatalf("TailLog created %s: %v", filepath.Dir(path), err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, "first run\n")
	if got := follow(t, tl, nil, 1); got[0] != "first run" {
		t.Fatalf("%q", got)
	}
	if err := os.RemoveAll(filepath.Join(project, "var")); err != nil {
		t.Fatal(err)
	}
	quiet(t, tl, "the folder removed")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, "second run\n")
	if got := follow(t, tl, nil, 1); got[0] != "second run" {
		t.Errorf("after the folder came back %q", got)
	}
	appendTo(t, path, "second run, more\n")
	if got := follow(t, tl, nil, 1); got[0] != "second run, more" {
		t.Errorf("then %q", got)
	}
}

// The tail read to the end of the file before it looked at anything else.
// An agent stuck printing in a loop writes faster than that: the end never
// came, so the pane got no line at all, the lines read piled up in memory
// (hundreds of MB in seconds), and Close never returned, so quitting the
// UI with that log open hung.
func TestReviewTailLogKeepsUpWithARunawayWriter(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mid-1.log")
	appendTo(t, path, "before\n")
	tl, err := TailLog(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	follow(t, tl, nil, 1)
	// At most 2 GB, so a tail that cannot keep up does not fill the disk.
	yes := exec.Command("sh", "-c", `yes "2025-06-02T09:29:00.000Z out the agent prints this again and again" | head -c 2000000000 >> "$0"`, path)
	yes.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := yes.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-yes.Process.Pid, syscall.SIGKILL); yes.Wait() })
	time.Sleep(100 * time.Millisecond) // the writer is well ahead
	got := 0
	for deadline := time.After(5 * time.Second); got < 1000; {
		select {
		case batch := <-tl.Lines():
			got += len(batch)
		case <-deadline:
			t.Fatalf("5 s behind a fast writer the tail gave %d lines", got)
		}
	}
	within(t, "Close while a fast writer writes", func() { tl.Close() })
}
