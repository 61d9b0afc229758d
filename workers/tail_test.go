package workers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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
	appendTo(t, path, "evil \x1b]0;pwned\x07 \x1b[2J end\n"+strings.Repeat("é", MaxLogLine)+"\n")
	got = follow(t, tl, nil, 2)
	if strings.ContainsAny(got[0], "\x1b\x07") || got[0] != "evil ?]0;pwned? ?[2J end" {
		t.Errorf("controls reached the line: %q", got[0])
	}
	if len(got[1]) > MaxLogLine+len("…") || !strings.HasSuffix(got[1], "é…") {
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
