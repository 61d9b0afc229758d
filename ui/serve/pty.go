package serve

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// ptyTerm is a session's PTY as its program sees it: a plain reader and
// writer on the slave. Nothing here asks either file for its descriptor:
// os.File.Fd puts a file in blocking mode, and then a read blocked on it
// holds its close off for ever (the program's read of the slave and the
// SSH library's read of the master waited on each other, and every
// session leaked its pair and two threads). The slave stays in the
// runtime's poller, so closing it wakes its reader and really closes it,
// which ends the library's read of the master with EIO.
type ptyTerm struct {
	slave, master *os.File
	pending       []byte       // what the client typed during the colour query
	lastRead      atomic.Int64 // when the client last typed, Unix nanoseconds
}

func (tm *ptyTerm) Read(b []byte) (int, error) {
	if len(tm.pending) > 0 {
		n := copy(b, tm.pending)
		tm.pending = tm.pending[n:]
		return n, nil
	}
	n, err := tm.slave.Read(b)
	if n > 0 {
		tm.lastRead.Store(time.Now().UnixNano())
	}
	return n, err
}

// typed is when the client last typed (followSize looks at the size more
// often while it does).
func (tm *ptyTerm) typed() time.Time { return time.Unix(0, tm.lastRead.Load()) }

func (tm *ptyTerm) Write(b []byte) (int, error) { return tm.slave.Write(b) }

// Close closes the slave; the SSH library closes the master after.
func (tm *ptyTerm) Close() error { return tm.slave.Close() }

// control runs fn on f's descriptor without taking it out of the poller.
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

func (tm *ptyTerm) makeRaw() error {
	return control(tm.slave, func(fd int) error {
		_, err := term.MakeRaw(fd)
		return err
	})
}

func (tm *ptyTerm) size() (w, h int, err error) {
	err = control(tm.slave, func(fd int) error {
		ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
		if err == nil {
			w, h = int(ws.Col), int(ws.Row)
		}
		return err
	})
	return w, h, err
}

// drain waits (a bounded while) until the program's last frame (leaving
// the alternate screen, the line saying why) has been read off the
// master, so closing the session does not cut it off, then gives the
// copy to the client a moment to send it.
func (tm *ptyTerm) drain() {
	for range 30 {
		n := 0
		err := control(tm.master, func(fd int) (err error) {
			n, err = unix.IoctlGetInt(fd, ioctlInputQueue)
			return err
		})
		if err != nil || n == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(30 * time.Millisecond)
}

// The terminal's replies, compiled at the first session (not at every
// fleetwatch start).
var (
	bgReply = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\x1b\]11;rgb:([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})(?:\x07|\x1b\\)`)
	})
	da1Reply = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\x1b\[\?[0-9;]*c`) })
)

// queryDark asks the client's terminal for its background colour (and
// for its attributes, which every terminal answers, so the wait ends
// early), reading at most until limit. Unknown is dark. What the client
// typed meanwhile is kept for the program.
func (tm *ptyTerm) queryDark(limit time.Duration) bool {
	if tm.slave.SetReadDeadline(time.Now().Add(limit)) != nil {
		return true
	}
	defer tm.slave.SetReadDeadline(time.Time{})
	if _, err := tm.slave.WriteString("\x1b]11;?\x07\x1b[c"); err != nil {
		return true
	}
	var buf []byte
	chunk := make([]byte, 256)
	for len(buf) < 4096 && !da1Reply().Match(buf) {
		n, err := tm.slave.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if err != nil {
			break
		}
	}
	dark := true
	if m := bgReply().FindSubmatch(buf); m != nil {
		dark = lightness(m[1], m[2], m[3]) < 0.5
	}
	buf = bgReply().ReplaceAll(buf, nil)
	tm.pending = bytes.Clone(da1Reply().ReplaceAll(buf, nil))
	return dark
}

// lightness is HSL lightness of an X11 rgb: colour's hex components.
func lightness(hex ...[]byte) float64 {
	lo, hi := 1.0, 0.0
	for _, h := range hex {
		v, _ := strconv.ParseUint(string(h), 16, 16)
		f := float64(v) / float64(uint64(1)<<(4*len(h))-1)
		lo, hi = min(lo, f), max(hi, f)
	}
	return (lo + hi) / 2
}
