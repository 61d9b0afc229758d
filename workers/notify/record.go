package notify

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
)

// The record, step by step, and why each holds across processes:
//
//  1. take the lock (a flock on lockRel; the kernel drops it when its
//     holder dies), then read what others appended since our last look;
//  2. a notice some line already claims for a target is dropped: every
//     cockpit and watcher of the project shares one record, so two of them
//     racing never both send, and a restart does not send again;
//  3. count the target's claims in the last minute, from the record: the
//     rate holds across processes too;
//  4. append one `claimed` line per message, then let go of the lock, and
//     only then send (a slow webhook holds no one up);
//  5. append how it went: `sent`, or `failed` with why.
//
// A process killed between 4 and 5 leaves a claim with no outcome: the
// notice is not sent again (at most once, never twice), and `notify log`
// shows it as claimed. Nothing under var/ is reached through a symlink.
//
// The record is compacted under the lock once it passes compactAt: the
// lines of the last keepFor, at most keepLines of them, replace it by a
// rename, so a fact still true after keepFor is noticed once more. Every
// process sees the new file by its inode and reads it from the start.

// RecordRel is the record of every message, relative to the project.
const RecordRel = "var/fleet/notify/sent.jsonl"

const lockRel = "var/fleet/notify/sent.lock"

// lockWait bounds waiting for another process's hold on the record; it
// holds it only to read and append a few lines.
const lockWait = 10 * time.Second

// maxLine bounds one line of the record; a longer one is skipped.
const maxLine = 64 << 10

// A claimed line must fit maxLine, or its claim is lost and its notices
// sent again: so a notice is recorded by its idKey, at most keyMax plain
// bytes (pendingMax of them, quoted, about 50 KiB), and a text by its
// first textMax bytes (each escaped to at most 6).
const (
	keyMax  = 48
	textMax = 512
)

// idKey is how the record names notice id: itself when short and plain,
// else its hash (a scope violation's ID lists every path).
func idKey(id string) string {
	plain := len(id) <= keyMax
	for i := 0; plain && i < len(id); i++ {
		c := id[i]
		plain = c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("._-:/@#+,=", c) >= 0
	}
	if plain {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:16])
}

// recordText is s cut to textMax bytes, on a character's boundary.
func recordText(s string) string {
	if len(s) <= textMax {
		return s
	}
	return strings.ToValidUTF8(s[:textMax], "") + "…"
}

// compactAt, keepFor and keepLines bound the record: about 200 bytes a
// line, so a compacted record is at most about 4 MB, half of compactAt.
var (
	compactAt int64 = 8 << 20
	keepFor         = 30 * 24 * time.Hour
	keepLines       = 20000
)

// Line is one line of the record.
type Line struct {
	At    time.Time `json:"at"`
	To    string    `json:"to"`
	State string    `json:"state"` // claimed, sent or failed
	// Msg names the message across its lines: host, pid and a count.
	Msg string `json:"msg"`
	// IDs are the notices a claimed message carries (several when it
	// sums up what waited over the rate), each by its idKey.
	IDs   []string `json:"ids,omitempty"`
	Kind  string   `json:"kind,omitempty"`
	Text  string   `json:"text,omitempty"`
	Tries int      `json:"tries,omitempty"`
	Error string   `json:"error,omitempty"`
}

// The states of a line.
const (
	Claimed = "claimed"
	Sent    = "sent"
	Failed  = "failed"
)

// record is this process's index of the record file: what each target
// has claimed, and when, caught up from the file under the lock.
type record struct {
	project string
	mu      sync.Mutex
	off     int64
	ino     uint64                     // the file read: a compaction replaces it
	claimed map[string]map[string]bool // target → notice IDs
	times   map[string][]time.Time     // target → its claims' times, for the rate
}

func newRecord(project string) *record {
	return &record{project: project, claimed: map[string]map[string]bool{}, times: map[string][]time.Time{}}
}

// hold takes the record's lock and catches up with the file; release
// lets both go.
func (r *record) hold() (release func(), err error) {
	r.mu.Lock()
	unlock, err := safepath.Lock(r.project, lockRel, lockWait)
	if err != nil {
		r.mu.Unlock()
		return nil, err
	}
	err = r.catchUp()
	if err == nil && r.off > compactAt {
		err = r.compact(time.Now())
	}
	if err != nil {
		unlock()
		r.mu.Unlock()
		return nil, err
	}
	return func() { unlock(); r.mu.Unlock() }, nil
}

// catchUp reads the lines appended since the last look; a file shorter
// than that was replaced, and is read from the start.
func (r *record) catchUp() error {
	f, err := safepath.OpenFile(r.project, RecordRel, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	ino := uint64(0)
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	if ino != r.ino || fi.Size() < r.off {
		r.off, r.ino = 0, ino
		clear(r.claimed)
		clear(r.times)
	}
	if _, err := f.Seek(r.off, io.SeekStart); err != nil {
		return err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, n, err := readLine(br)
		if err != nil {
			return nil // a line not yet ended is read next time
		}
		r.off += int64(n)
		var l Line
		if len(line) <= maxLine && json.Unmarshal(line, &l) == nil {
			r.apply(l)
		}
	}
}

// readLine is one whole line, newline included, and its length; of a
// line over maxLine only the start is kept (the caller skips it), so a
// huge line is never held whole.
func readLine(br *bufio.Reader) ([]byte, int, error) {
	var buf []byte
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if len(buf) <= maxLine {
			buf = append(buf, chunk[:min(len(chunk), maxLine+1-len(buf))]...)
		}
		switch {
		case err == nil:
			return buf, n, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		}
		return nil, 0, err
	}
}

func (r *record) apply(l Line) {
	if l.State != Claimed {
		return
	}
	ids := r.claimed[l.To]
	if ids == nil {
		ids = map[string]bool{}
		r.claimed[l.To] = ids
	}
	for _, id := range l.IDs {
		ids[idKey(id)] = true
	}
	r.times[l.To] = append(r.times[l.To], l.At)
}

// recent is how many messages target was sent since `since` and not
// after now, and the earliest of them; older times are forgotten. One
// stamped after now (the clock was set back, or the line is forged) is
// not counted: it would hold the target until its time came.
func (r *record) recent(target string, since, now time.Time) (int, time.Time) {
	ts := r.times[target]
	keep := ts[:0]
	var count int
	var first time.Time
	for _, t := range ts {
		if !t.After(since) {
			continue
		}
		keep = append(keep, t)
		if !t.After(now) {
			count++
			if first.IsZero() || t.Before(first) {
				first = t
			}
		}
	}
	r.times[target] = keep
	return count, first
}

// add appends lines in one write; the caller holds the record.
func (r *record) add(lines ...Line) error {
	var buf bytes.Buffer
	for _, l := range lines {
		keys := make([]string, len(l.IDs))
		for i, id := range l.IDs {
			keys[i] = idKey(id)
		}
		l.IDs, l.Text, l.Error = keys, recordText(l.Text), recordText(l.Error)
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		buf.Write(append(b, '\n'))
	}
	if _, err := safepath.MkdirAll(r.project, "var/fleet/notify"); err != nil {
		return err
	}
	f, err := safepath.OpenFile(r.project, RecordRel, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	// A last line cut short (a crash, a full disk) is ended first: glued
	// to it, the claim would be unreadable and its notice sent again.
	data := buf.Bytes()
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		last := []byte{0}
		if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			data = append([]byte{'\n'}, data...)
		}
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	return r.catchUp()
}

// compact replaces the record with its lines of the last keepFor, the
// newest keepLines and half of compactAt of them at most, and reads it
// again; the caller holds the lock.
func (r *record) compact(now time.Time) error {
	lines, err := ReadRecord(r.project)
	if err != nil {
		return err
	}
	cut := now.Add(-keepFor)
	keep := lines[:0]
	for _, l := range lines {
		if l.At.After(cut) {
			keep = append(keep, l)
		}
	}
	keep = keep[max(0, len(keep)-keepLines):]
	// The newest lines up to half of compactAt: long ones still past it
	// would be compacted again, whole, at every hold.
	var kept [][]byte
	size := 0
	for i := len(keep) - 1; i >= 0; i-- {
		b, err := json.Marshal(keep[i])
		if err != nil {
			return err
		}
		if size += len(b) + 1; int64(size) > compactAt/2 {
			break
		}
		kept = append(kept, b)
	}
	var buf bytes.Buffer
	for i := len(kept) - 1; i >= 0; i-- {
		buf.Write(append(kept[i], '\n'))
	}
	dir, err := safepath.OpenDir(r.project, "var/fleet/notify", false)
	if err != nil {
		return err
	}
	defer dir.Close()
	if err := atomicfile.WriteAt(dir, path.Base(RecordRel), buf.Bytes(), 0o644); err != nil {
		return err
	}
	return r.catchUp()
}

// ReadRecord is every line of project's record, oldest first (lines that
// do not parse are skipped).
func ReadRecord(project string) ([]Line, error) {
	f, err := safepath.OpenFile(project, RecordRel, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Line
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, _, err := readLine(br)
		if err != nil {
			return out, nil
		}
		var l Line
		if len(line) <= maxLine && json.Unmarshal(line, &l) == nil {
			out = append(out, l)
		}
	}
}
