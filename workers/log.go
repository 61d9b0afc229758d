package workers

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"fleetwatch/internal/safepath"
)

// Log streams of a worker log line: the executor's stdout and stderr, and
// the driver's own account of what it did.
const (
	StreamOut   = "out"
	StreamErr   = "err"
	StreamFleet = "fleet"
)

// logRotateAt is the size at which a worker's log is moved to <log>.1 when
// a driver starts, so a long-lived agent id cannot fill the disk.
const logRotateAt = 16 << 20

// maxLogLine caps one logged line; longer output is split across lines.
const maxLogLine = 16 << 10

// Log is one worker's log file. Every line is `<RFC 3339 UTC, ms> <stream>
// <text>`, written in one append so lines from the driver and both of the
// executor's streams never interleave mid-line.
type Log struct {
	Path string
	mu   sync.Mutex
	f    *os.File
	echo io.Writer
	now  func() time.Time
}

// OpenLog opens agentID's log in project for appending. When echo is not
// nil every line's text is also written there, for a person watching.
func OpenLog(project, agentID string, echo io.Writer) (*Log, error) {
	p := LogPath(project, agentID)
	if err := fleetDir(project); err != nil {
		return nil, err
	}
	if err := mkdirIn(project, filepath.Dir(p)); err != nil {
		return nil, err
	}
	rotateLog(p)
	f, err := openIn(project, p, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	return &Log{Path: p, f: f, echo: echo, now: time.Now}, nil
}

// rotateLog moves a log over logRotateAt to <log>.1. Whoever opens a log to
// write a new run into it calls it first, so a spawned driver's stderr and
// its own lines end up in the same file.
func rotateLog(p string) {
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() > logRotateAt {
		_ = os.Rename(p, p+".1")
	}
}

// Printf logs one driver line. A line break in it (a plan's file name may
// hold one) is written as \n, so the line stays one line.
func (l *Log) Printf(format string, args ...any) {
	l.line(StreamFleet, oneLine.Replace(fmt.Sprintf(format, args...)))
}

var oneLine = strings.NewReplacer("\n", `\n`, "\r", `\r`)

// LogLine is one line of a worker log, newline included.
func LogLine(at time.Time, stream, text string) string {
	return at.UTC().Format(LogTimeLayout) + " " + stream + " " + text + "\n"
}

func (l *Log) line(stream, text string) {
	b := []byte(LogLine(l.now(), stream, text))
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.f.Write(b)
	if l.echo != nil {
		_, _ = io.WriteString(l.echo, text+"\n")
	}
}

// Close closes the file.
func (l *Log) Close() error { return l.f.Close() }

// writer returns an io.Writer that logs what is written to it line by line
// under stream; flush logs an unfinished last line.
func (l *Log) writer(stream string) *lineWriter { return &lineWriter{log: l, stream: stream} }

type lineWriter struct {
	log    *Log
	stream string
	mu     sync.Mutex
	buf    []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.log.line(w.stream, string(bytes.TrimSuffix(w.buf[:i], []byte("\r"))))
		w.buf = w.buf[i+1:]
	}
	for len(w.buf) >= maxLogLine {
		w.log.line(w.stream, string(w.buf[:maxLogLine]))
		w.buf = w.buf[maxLogLine:]
	}
	// Keep the tail in a fresh slice so a long run does not pin old buffers.
	w.buf = append([]byte(nil), w.buf...)
	return len(p), nil
}

func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.log.line(w.stream, string(w.buf))
		w.buf = nil
	}
}

// fleetDir makes var/fleet/ and keeps git out of it with its own
// .gitignore (and var/'s), so worker state never shows up as untracked
// files even in a project whose .gitignore does not list var/. A symlink on
// the way is refused, never followed.
func fleetDir(project string) error {
	if err := mkdirIn(project, filepath.Join(project, "var", "fleet")); err != nil {
		return err
	}
	_, err := safepath.WriteNew(project, "var/fleet/.gitignore", []byte("# worker state and logs (fleetwatch)\n*\n"), 0o644)
	return err
}
