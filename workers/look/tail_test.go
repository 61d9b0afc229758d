package look

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

// follow collects what a tail delivers until it has want lines in all,
// failing after 10 s; it returns them.
func follow(t *testing.T, tl *Tail, got []string, want int) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for len(got) < want {
		select {
		case batch, ok := <-tl.Lines():
			if !ok {
				t.Fatalf("the tail closed after %q", got)
			}
			got = append(got, batch...)
		case <-deadline:
			t.Fatalf("after 10 s the tail gave %d lines, want %d: %q", len(got), want, got)
		}
	}
	return got
}

// quiet checks that the tail delivers nothing for a moment.
func quiet(t *testing.T, tl *Tail, what string) {
	t.Helper()
	select {
	case batch := <-tl.Lines():
		t.Errorf("%s: the tail delivered %q", what, batch)
	case <-time.After(150 * time.Millisecond):
	}
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func TestTailLogBacklogThenNewLines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "logs", "mid-1.log")
	os.MkdirAll(filepath.Dir(path), 0o755)
	var b strings.Builder
	for i := range 10 {
		b.WriteString("line " + string(rune('0'+i)) + "\n")
	}
	os.WriteFile(path, []byte(b.String()+"half"), 0o644)
	tl, err := TailLog(path, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	got := follow(t, tl, nil, 3)
	if !slices.Equal(got, []string{"line 7", "line 8", "line 9"}) {
		t.Fatalf("backlog %q", got)
	}
	quiet(t, tl, "a line not yet finished")
	appendTo(t, path, " done\r\nnext\n")
	got = follow(t, tl, nil, 2)
	if !slices.Equal(got, []string{"half done", "next"}) {
		t.Errorf("new lines %q", got)
	}

	// Escape sequences and other controls never get through; a huge line is cut.
	appendTo(t, path, "evil \x1b]0;pwned\x07 \x1b[2J end\n"+strings.Repeat("é", maxTailLine)+"\n")
	got = follow(t, tl, nil, 2)
	if strings.ContainsAny(got[0], "\x1b\x07") || got[0] != "evil ?]0;pwned? ?[2J end" {
		t.Errorf("controls reached the line: %q", got[0])
	}
	if len(got[1]) > maxTailLine+len("…") || !strings.HasSuffix(got[1], "é…") {
		t.Errorf("long line: %d bytes, ends %q", len(got[1]), got[1][len(got[1])-8:])
	}

	// Truncated (as by `: > log`): read again from the start.
	os.WriteFile(path, []byte("fresh 1\n"), 0o644)
	got = follow(t, tl, nil, 1)
	if got[0] != "fresh 1" {
		t.Errorf("after truncation %q", got)
	}
	// Replaced (removed and written anew): the new file from its start.
	os.Remove(path)
	appendTo(t, path, "second file 1\nsecond file 2\n")
	got = follow(t, tl, nil, 2)
	if !slices.Equal(got, []string{"second file 1", "second file 2"}) {
		t.Errorf("after recreation %q", got)
	}
	// Renamed over (as log rotation does).
	tmp := path + ".new"
	os.WriteFile(tmp, []byte("rotated 1\n"), 0o644)
	os.Rename(tmp, path)
	got = follow(t, tl, nil, 1)
	if got[0] != "rotated 1" {
		t.Errorf("after rename %q", got)
	}
	appendTo(t, path, "rotated 2\n")
	if got = follow(t, tl, nil, 1); got[0] != "rotated 2" {
		t.Errorf("after rename, a new line %q", got)
	}
}

func TestTailLogWaitsForTheFileAndCloses(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "var", "fleet", "logs", "ui-mid-1.log")
	tl, err := TailLog(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	quiet(t, tl, "no file yet")
	// A reader makes nothing; the first driver makes the folders.
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Fatalf("TailLog created %s: %v", filepath.Dir(path), err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, "2025-06-02T09:30:00.000Z out first\n")
	if got := follow(t, tl, nil, 1); got[0] != "2025-06-02T09:30:00.000Z out first" {
		t.Errorf("%q", got)
	}
	// Many lines at once arrive in few batches, all of them, in order.
	var b strings.Builder
	for range 2000 {
		b.WriteString("x\n")
	}
	appendTo(t, path, b.String())
	if got := follow(t, tl, nil, 2000); len(got) != 2000 {
		t.Errorf("%d lines", len(got))
	}
	if err := tl.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-tl.Lines(); ok {
		t.Error("Lines is still open after Close")
	}
	tl.Close() // again: nothing happens
}

func TestParseLogLine(t *testing.T) {
	at, stream, text, ok := ParseLogLine("2025-06-02T09:30:01.250Z err boom: no such file")
	if !ok || stream != StreamErr || text != "boom: no such file" || !at.Equal(time.Date(2025, 6, 2, 9, 30, 1, 250e6, time.UTC)) {
		t.Errorf("%v %q %q %v", at, stream, text, ok)
	}
	if _, stream, text, ok := ParseLogLine("2025-06-02T09:30:01.250Z fleet "); !ok || stream != StreamFleet || text != "" {
		t.Errorf("empty text: %q %q %v", stream, text, ok)
	}
	for _, line := range []string{"", "plain output", "2025-06-02 out x", "2025-06-02T09:30:01Z warn x", "2025-06-02T09:30:01Z"} {
		if _, _, text, ok := ParseLogLine(line); ok || text != line {
			t.Errorf("%q: parsed as a log line (%q)", line, text)
		}
	}
}

// TailLog opened the log with a blocking open(2): a FIFO at the log's path
// kept the UI's log pane at "opening…" for good, with a goroutine nobody
// could stop.
func TestTailLogOfAFIFODoesNotBlock(t *testing.T) {
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
	testkit.Within(t, "TailLog of a FIFO", func() { tl, err = TailLog(path, 10) })
	if err == nil {
		defer tl.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("TailLog of a FIFO: %v", err)
	}
}

// TailLog watched the log's folder alone. When the folder went (rm -rf
// var/, git clean -fdx; var/ is git-ignored) and came back, the watch
// was gone with it: the pane still said "following" and never showed
// another line, though the next worker wrote to the same path.
func TestTailLogFollowsThroughItsFolderComingBack(t *testing.T) {
	t.Parallel()
	project := testkit.Project(t)
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
func TestTailLogKeepsUpWithARunawayWriter(t *testing.T) {
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
	testkit.Within(t, "Close while a fast writer writes", func() { tl.Close() })
}
