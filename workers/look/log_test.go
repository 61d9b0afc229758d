package look

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func logSizes(t *testing.T, p string) (live, old int64) {
	t.Helper()
	if fi, err := os.Stat(p); err == nil {
		live = fi.Size()
	}
	if fi, err := os.Stat(p + ".1"); err == nil {
		old = fi.Size()
	}
	return live, old
}

// A running worker's log never holds more than twice the cap on disk,
// whatever its lines: short ones, a megabyte without a line break, and the
// driver's own long lines.
func TestLogStaysWithinTwiceItsCapWhileItRuns(t *testing.T) {
	defer func(old int64) { logCap = old }(logCap)
	logCap = 4 << 10
	dir := t.TempDir()
	l, err := OpenLog(dir, "w1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	w := l.Writer(StreamOut)
	check := func(what string) {
		t.Helper()
		live, old := logSizes(t, l.Path)
		if live > logCap || old > logCap || live+old > 2*logCap {
			t.Fatalf("after %s: live %d + .1 %d bytes, cap %d", what, live, old, logCap)
		}
	}
	for i := range 500 {
		fmt.Fprintf(w, "short line %d\n", i)
		check("short lines")
	}
	w.Write([]byte(strings.Repeat("x", 1<<20)))
	check("a megabyte without a line break")
	w.Flush()
	l.Printf("a driver line %s", strings.Repeat("y", 100<<10))
	check("a long driver line")
	fmt.Fprintf(w, "last\n")
	check("the last line")
	data, _ := os.ReadFile(l.Path)
	if !strings.HasSuffix(string(data), " out last\n") {
		t.Errorf("the live file should end with the last line:\n%.200s", data)
	}
}

// A spawned driver's stderr is the log file itself (O_APPEND); after the
// driver moves the log to .log.1, its stderr follows to the new file
// instead of growing the old one without bound.
func TestLogRotationTakesTheDriversStderrAlong(t *testing.T) {
	if p := os.Getenv("FLEETWATCH_LOG_HELPER"); p != "" {
		logCap = 2 << 10
		l, err := OpenLog(p, "w1", nil)
		if err != nil {
			os.Exit(3)
		}
		for i := range 300 {
			l.Printf("driver line %d", i)
			fmt.Fprintf(os.Stderr, "fleetwatch: stderr line %d\n", i)
		}
		l.Close()
		os.Exit(0)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/var/fleet/logs", 0o755); err != nil {
		t.Fatal(err)
	}
	p := LogPath(dir, "w1")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLogRotationTakesTheDriversStderrAlong$")
	cmd.Env = append(os.Environ(), "FLEETWATCH_LOG_HELPER="+dir)
	cmd.Stderr = f
	err = cmd.Run()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	live, old := logSizes(t, p)
	// Each file stays within the cap but for the driver's own stderr lines
	// written since its last log line: one here.
	const slack = 64
	if live > 2<<10+slack || old > 2<<10+slack {
		t.Errorf("live %d, .1 %d bytes; cap %d", live, old, 2<<10)
	}
	data, _ := os.ReadFile(p)
	if !strings.Contains(string(data), "fleetwatch: stderr line 299\n") {
		t.Errorf("the last stderr line should be in the live file:\n%s", data)
	}
}

// Every line of a worker log starts with its time and stream, even when
// the driver names a plan whose file name holds a line break.
func TestLogDriverLinesStayOneLine(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenLog(dir, "w", nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Printf("claimed %s", "in-progress/x\ny\r.md")
	l.Close()
	data, err := os.ReadFile(l.Path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"); len(lines) != 1 || !strings.HasSuffix(lines[0], ` fleet claimed in-progress/x\ny\r.md`) {
		t.Errorf("log:\n%q", data)
	}
}
