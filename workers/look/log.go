package look

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// Log streams of a worker log line: the executor's stdout and stderr, and
// the driver's own account of what it did.
const (
	StreamOut   = "out"
	StreamErr   = "err"
	StreamFleet = "fleet"
)

// logCap is the size a worker's log grows to before it is moved to
// <log>.1, which a second move replaces: a worker keeps at most twice it
// on disk however long it runs and whatever it prints. A variable so tests
// can shrink it.
var logCap int64 = 64 << 20

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
	Now  func() time.Time
	cap  int64 // logCap when opened
	// stderr is set when this process's stderr is the log file (a spawned
	// driver's): a rotation moves fd 2 to the new file too, so nothing
	// keeps writing to <log>.1.
	stderr bool
	last   string // the last line's text, for the worker's published record
}

// OpenLog opens agentID's log in project for appending. When echo is not
// nil every line's text is also written there, for a person watching.
func OpenLog(project, agentID string, echo io.Writer) (*Log, error) {
	p := LogPath(project, agentID)
	if err := tree.FleetDir(project); err != nil {
		return nil, err
	}
	if err := tree.MkdirIn(project, filepath.Dir(p)); err != nil {
		return nil, err
	}
	RotateLog(p)
	f, err := tree.OpenIn(project, p, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	l := &Log{Path: p, f: f, echo: echo, Now: time.Now, cap: max(logCap, 1<<10)}
	l.stderr = sameFile(f, os.Stderr)
	return l, nil
}

// RotateLog moves a log at or over logCap to <log>.1. The spawner calls it
// before it opens the log for a driver's stderr, so that stderr and the
// driver's own lines end up in the same file.
func RotateLog(p string) {
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() >= logCap {
		_ = os.Rename(p, p+".1")
	}
}

func sameFile(a, b *os.File) bool {
	fa, err1 := a.Stat()
	fb, err2 := b.Stat()
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// rotate makes room for n more bytes: when they would take the file past
// the cap it becomes <log>.1 and a new, empty file takes its place. The
// size is the file's own, so writes through other descriptors (a spawned
// driver's stderr) count too. Called with mu held.
func (l *Log) rotate(n int) {
	fi, err := l.f.Stat()
	if err != nil || fi.Size() == 0 || fi.Size()+int64(n) <= l.cap {
		return
	}
	if cur, err := os.Lstat(l.Path); err != nil || !os.SameFile(fi, cur) {
		return // someone else moved or replaced it; write on
	}
	if os.Rename(l.Path, l.Path+".1") != nil {
		return
	}
	f, err := os.OpenFile(l.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		// Keep writing to the moved file rather than lose lines; the next
		// line tries again.
		return
	}
	if l.stderr {
		_ = dupOnto(int(f.Fd()), int(os.Stderr.Fd()))
	}
	l.f.Close()
	l.f = f
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
	at := l.Now()
	// However long the text, no line outgrows the cap: the live file and
	// <log>.1 stay within it each.
	chunk := min(maxLogLine, int(l.cap/2))
	l.mu.Lock()
	defer l.mu.Unlock()
	for first := true; first || text != ""; first = false {
		part := text
		if len(part) > chunk {
			part = text[:chunk]
		}
		text = text[len(part):]
		l.last = part
		b := []byte(LogLine(at, stream, part))
		l.rotate(len(b))
		_, _ = l.f.Write(b)
		if l.echo != nil {
			_, _ = io.WriteString(l.echo, part+"\n")
		}
	}
}

// Close closes the file.
func (l *Log) Close() error { return l.f.Close() }

// Last is the text of the last line logged, raw (readers sanitize it).
func (l *Log) Last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// Writer returns an io.Writer that logs what is written to it line by line
// under stream; flush logs an unfinished last line.
func (l *Log) Writer(stream string) *LineWriter { return &LineWriter{log: l, stream: stream} }

// LineWriter is one of the log's streams as an io.Writer: whole lines,
// each stamped and cut at maxLogLine.
type LineWriter struct {
	log    *Log
	stream string
	Tap    func(string) // also sees each whole line, when set
	mu     sync.Mutex
	buf    []byte
}

// Write logs each whole line of p and keeps the rest for the next.
func (w *LineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := string(bytes.TrimSuffix(w.buf[:i], []byte("\r")))
		w.log.line(w.stream, line)
		if w.Tap != nil {
			w.Tap(line)
		}
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

// Flush logs what is left of a last line without its newline.
func (w *LineWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.log.line(w.stream, string(w.buf))
		w.buf = nil
	}
}
