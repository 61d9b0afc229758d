package look

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/fsnotify/fsnotify"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
)

// A worker's log has one line per output line: `<time> <stream> <text>`,
// the time in RFC 3339 with milliseconds, UTC; the stream out or err (the
// executor's) or fleet (the driver's own words).
const LogTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// ParseLogLine splits a log line into its parts; ok is false for a line
// not in the log format (a program that wrote to the file directly).
func ParseLogLine(line string) (at time.Time, stream, text string, ok bool) {
	ts, rest, ok1 := strings.Cut(line, " ")
	stream, text, ok2 := strings.Cut(rest, " ")
	if !ok1 || (!ok2 && rest == "") {
		return time.Time{}, "", line, false
	}
	switch stream {
	case StreamOut, StreamErr, StreamFleet:
	default:
		return time.Time{}, "", line, false
	}
	at, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return time.Time{}, "", line, false
	}
	return at, stream, text, true
}

// maxTailLine is how many bytes of one log line TailLog keeps; the rest is
// cut and marked with `…`.
const maxTailLine = 4096

// tailBatch bounds the lines a slow reader has waiting: older ones go.
const tailBatch = 10000

// maxDrain bounds one read of the log, so that a writer faster than the
// tail (an agent printing in a loop) never keeps it from handing lines
// over or from stopping. A tail further behind than that skips ahead:
// the lines in between would be dropped anyway.
const maxDrain = 4 << 20

// Tail follows one log file: Lines delivers its last lines, then each new
// complete line, in batches, until Close.
type Tail struct {
	lines chan []string
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// Lines delivers batches of lines, each cut to maxTailLine bytes and safe
// to draw on a terminal (termtext.Line). It holds at most one batch: lines
// not yet received gather in the next. It is closed by Close.
func (t *Tail) Lines() <-chan []string { return t.lines }

// Close stops following and waits for the goroutine; it closes Lines.
// Calling it again does nothing.
func (t *Tail) Close() error {
	t.once.Do(func() { close(t.stop) })
	<-t.done
	return nil
}

// TailLog follows path: first its last backlog lines, then every new
// complete line. It watches path's directory with fsnotify (no polling),
// so a log that does not exist yet is followed from when it appears, and
// one that is truncated or replaced is read again from its start. A
// reader creates nothing: while the directory is missing (or when it goes),
// the nearest folder on the way to it is watched until it comes.
func TailLog(path string, backlog int) (*Tail, error) {
	path = filepath.Clean(path)
	dir := filepath.Dir(path)
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("cannot follow %s: %v", path, err)
	}
	way := &folderWatch{target: dir, fw: fw}
	if err := way.climb(); err != nil {
		fw.Close()
		return nil, fmt.Errorf("cannot follow %s: %v", path, err)
	}
	t := &Tail{lines: make(chan []string, 1), stop: make(chan struct{}), done: make(chan struct{})}
	f := &follower{path: path}
	// The backlog is read after the watch is in place, so no line written
	// in between is lost.
	pending, err := f.backlog(backlog)
	if err != nil {
		fw.Close()
		return nil, fmt.Errorf("cannot follow %s: %v", path, err)
	}
	go t.run(way, f, pending)
	return t, nil
}

func (t *Tail) run(way *folderWatch, f *follower, pending []string) {
	fw := way.fw
	defer close(t.done)
	defer close(t.lines)
	defer fw.Close()
	defer f.close()
	ready := make(chan struct{})
	close(ready)
	for {
		var out chan []string
		if len(pending) > 0 {
			out = t.lines
		}
		var more <-chan struct{}
		if f.more {
			more = ready // the last read stopped short of the end
		}
		select {
		case <-t.stop:
			return
		case out <- pending:
			pending = nil
		case <-more:
			pending = append(pending, f.read()...)
		case ev, ok := <-fw.Events:
			if !ok {
				return
			}
			if way.onTheWay(ev) {
				// The folder went, or came back (rm -rf var/, then a
				// new worker): watch what is there now, and read what
				// may have come with it.
				_ = way.climb()
				pending = append(pending, f.read()...)
				continue
			}
			if filepath.Clean(ev.Name) != f.path {
				continue
			}
			// A write, a new file at path, or the file going: read
			// tells them apart.
			pending = append(pending, f.read()...)
		case _, ok := <-fw.Errors:
			if !ok {
				return
			}
			// A full event queue may have swallowed writes: read on.
			pending = append(pending, f.read()...)
		}
		if len(pending) > tailBatch {
			pending = append(pending[:0], pending[len(pending)-tailBatch:]...)
		}
	}
}

// follower is the goroutine's view of the file: where it has read to and
// the start of a line not yet finished.
type follower struct {
	path    string
	f       *os.File
	off     int64
	partial []byte // at most maxTailLine+1 bytes: one more says it was cut
	skip    bool   // the line being read began before the backlog: drop it
	more    bool   // the last read stopped at maxDrain, short of the end
}

func (f *follower) close() {
	if f.f != nil {
		f.f.Close()
		f.f = nil
	}
	f.off, f.partial, f.skip, f.more = 0, nil, false, false
}

var errNotRegular = errors.New("not a regular file")

// reopen starts again with the file now at path, from its start. Only a
// regular file is followed: opening a FIFO for reading would block.
func (f *follower) reopen() error {
	f.close()
	file, err := os.OpenFile(f.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	if fi, err := file.Stat(); err != nil || !fi.Mode().IsRegular() {
		file.Close()
		return errNotRegular
	}
	f.f = file
	return nil
}

// backlog opens the file and returns its last n complete lines, leaving
// the reader at the end. A file not there yet is no error; one that is
// not a regular file is.
func (f *follower) backlog(n int) ([]string, error) {
	if err := f.reopen(); errors.Is(err, errNotRegular) {
		return nil, err
	}
	if f.f == nil {
		return nil, nil
	}
	fi, err := f.f.Stat()
	if err != nil {
		return nil, nil
	}
	// Enough bytes for n cut lines; earlier ones would be dropped anyway.
	start := max(0, fi.Size()-int64(n+1)*(maxTailLine+1))
	if _, err := f.f.Seek(start, io.SeekStart); err != nil {
		return nil, nil
	}
	f.off, f.skip = start, start > 0
	lines := f.read()
	if n <= 0 {
		return nil, nil
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines, nil
}

// read returns the complete lines written since the last read. A file now
// shorter than what was read was truncated: it is read again from its
// start. When a different file is at path (replaced, or renamed over),
// the rest of the old one is read, then the new one from its start. When
// none is, the rest of the old one is read and it is let go: held open, it
// would keep its folder from going, so the watch would never see that.
func (f *follower) read() []string {
	if f.f == nil {
		if f.reopen() != nil {
			return nil
		}
	}
	var lines []string
	if fi, err := f.f.Stat(); err == nil {
		cur, err := os.Stat(f.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			lines = f.drain()
			f.close()
			return lines
		case err == nil && !os.SameFile(fi, cur):
			lines = f.drain()
			if f.reopen() != nil {
				return lines
			}
		case fi.Size() < f.off:
			f.off, f.partial, f.skip = 0, nil, false
			if _, err := f.f.Seek(0, io.SeekStart); err != nil {
				return nil
			}
		case fi.Size()-f.off > 2*maxDrain:
			at := fi.Size() - maxDrain
			if _, err := f.f.Seek(at, io.SeekStart); err != nil {
				return nil
			}
			lines = append(lines, fmt.Sprintf("(%d MiB of log skipped: it grows faster than it can be shown)", (at-f.off)>>20))
			f.off, f.partial, f.skip = at, f.partial[:0], true
		}
	}
	return append(lines, f.drain()...)
}

// drain reads the open file to its end, or maxDrain bytes of it, and
// returns the lines completed.
func (f *follower) drain() []string {
	var lines []string
	buf := make([]byte, 32<<10)
	for read := 0; ; read += len(buf) {
		if f.more = read >= maxDrain; f.more {
			return lines
		}
		if len(lines) > 2*tailBatch {
			lines = append(lines[:0], lines[len(lines)-tailBatch:]...)
		}
		n, err := f.f.Read(buf)
		f.off += int64(n)
		chunk := buf[:n]
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			part := chunk
			if i >= 0 {
				part = chunk[:i]
			}
			if room := maxTailLine + 1 - len(f.partial); !f.skip && room > 0 {
				f.partial = append(f.partial, part[:min(len(part), room)]...)
			}
			if i < 0 {
				break
			}
			if !f.skip {
				lines = append(lines, cleanLogLine(f.partial))
			}
			f.partial, f.skip = f.partial[:0], false
			chunk = chunk[i+1:]
		}
		if err != nil || n == 0 {
			if err != nil && !errors.Is(err, io.EOF) {
				lines = append(lines, "(reading the log failed: "+termtext.Line(err.Error())+")")
			}
			return lines
		}
	}
}

// cleanLogLine cuts a line to maxTailLine bytes on a character boundary and
// makes it safe for a terminal.
func cleanLogLine(b []byte) string {
	b = bytes.TrimSuffix(b, []byte{'\r'})
	cut := len(b) > maxTailLine
	if cut {
		i := maxTailLine
		for i > 0 && !utf8.RuneStart(b[i]) {
			i--
		}
		b = b[:i]
	}
	s := termtext.Line(strings.ToValidUTF8(string(b), "?"))
	if cut {
		s += "…"
	}
	return s
}

// LogTail is the last n lines of the log at path (a check's, a landing's),
// each cut and made safe as a Tail delivers them; nil when there is no
// such file.
func LogTail(path string, n int) ([]string, error) {
	f := &follower{path: filepath.Clean(path)}
	defer f.close()
	return f.backlog(n)
}
