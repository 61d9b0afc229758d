package planfs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Event is one line of logs/events.jsonl.
type Event struct {
	TS      string `json:"ts"`
	Event   string `json:"event"`
	Slug    string `json:"slug"`
	From    string `json:"from"`
	To      string `json:"to"`
	AgentID string `json:"agent_id"`
	// Origin is the ready rel a claimed or parked plan came from, so return
	// can send it back there.
	Origin string `json:"origin,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Lease is the token of the lease the plan was moved under, when its
	// holder moved it; Forced says someone else moved it over the lease.
	Lease  string `json:"lease,omitempty"`
	Forced bool   `json:"forced,omitempty"`
	// Paths are the files an event is about: a scope violation's.
	Paths []string `json:"paths,omitempty"`
	// Via is how the actor reached the tree (Tree.Via): over SSH, with
	// which key.
	Via string `json:"via,omitempty"`
	// Worker is the agent a person's message was for (tell, interrupt,
	// answer); AgentID is then who sent it.
	Worker string `json:"worker,omitempty"`
}

// EventsFile is the event log's path relative to .plans/.
const EventsFile = "logs/events.jsonl"

// appendEvent writes one line with O_APPEND in a single write, so lines from
// concurrent workers never interleave. Failing to log never fails a verb that
// already changed the tree.
func (t *Tree) appendEvent(e Event) {
	if t.ReadOnly {
		return // a viewer's tree changes nothing, not even the log
	}
	e.TS = t.Now().UTC().Format(time.RFC3339Nano)
	if t.Via != "" {
		e.Via = t.Via
	}
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	// Never through a symlink: verbs refuse one before changing anything
	// (see writable); here it is only skipped.
	if t.logsDir() != nil {
		return
	}
	f, err := t.openPlansFile(EventsFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return
	}
	_, _ = f.Write(append(b, '\n'))
	_ = f.Close()
}

// LogEvent appends e to the event log, for what happens to a plan outside
// the verbs (a worker handing its branch on). Failing to log is not an error;
// on a read-only tree it is a no-op.
func (t *Tree) LogEvent(e Event) { t.appendEvent(e) }

// Events reads the event log, oldest first, skipping lines that do not parse.
func (t *Tree) Events() ([]Event, error) {
	f, err := os.Open(filepath.Join(t.Plans, EventsFile))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	var out []Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out, nil
}

// eventOrigin finds the ready rel a plan at rel came from: the origin of the
// last event that put it there (a claim or a park). Events that left it
// where it was (an edit, a recover) put it nowhere.
func (t *Tree) eventOrigin(rel string) string {
	events, _ := t.Events()
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].To == rel && events[i].From != rel {
			if events[i].Origin != "" {
				return events[i].Origin
			}
			return events[i].From
		}
	}
	return ""
}

// LastMoveFrom returns the newest event that moved a plan away from rel,
// among the last n events; nil when there is none.
func (t *Tree) LastMoveFrom(rel string, n int) *Event {
	events, _ := t.RecentEvents(n)
	for i := range events {
		if events[i].From == rel && events[i].To != rel {
			return &events[i]
		}
	}
	return nil
}

// eventsChunk is how much of the log RecentEvents reads per step back from
// its end.
const eventsChunk = 64 << 10

// maxEventLine is the longest line RecentEvents will assemble, as Events'
// scanner; a longer one is skipped, not read whole.
const maxEventLine = 1 << 20

// RecentEvents returns up to n of the newest events, newest first.
func (t *Tree) RecentEvents(n int) ([]Event, error) {
	if n <= 0 {
		return nil, nil
	}
	p := filepath.Join(t.Plans, EventsFile)
	f, err := os.Open(p)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("cannot read %s: %v", p, errText(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", p, errText(err))
	}
	out, err := recentEvents(f, fi.Size(), n, eventsChunk)
	if err != nil {
		return out, fmt.Errorf("cannot read %s: %v", p, errText(err))
	}
	return out, nil
}

// recentEvents reads the log of the given size backwards from its end, a
// chunk at a time, until it has n events: the log grows without bound, and
// a UI refresh must cost the same on day one and day three hundred. A last
// line without its newline is one being written (or torn by a crash), and is
// skipped like a line that does not parse.
func recentEvents(r io.ReaderAt, size int64, n, chunk int) ([]Event, error) {
	var (
		out []Event
		// buf holds the unparsed bytes from pos up to the end of the newest
		// whole line not yet parsed; it ends in '\n' once lineEnd is set.
		buf     []byte
		pos     = size
		lineEnd = false
	)
	for pos > 0 && len(out) < n {
		step := min(pos, int64(chunk))
		pos -= step
		next := make([]byte, int(step)+len(buf))
		if _, err := r.ReadAt(next[:step], pos); err != nil && err != io.EOF {
			return out, err
		}
		copy(next[step:], buf)
		buf = next
		if !lineEnd {
			// Drop what follows the last newline: the partial last line,
			// or the rest of a line too long to keep.
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 {
				buf = nil
				continue
			}
			buf, lineEnd = buf[:i+1], true
		}
		buf, out = newestEvents(buf, out, n, pos == 0)
		if len(buf) > maxEventLine {
			buf, lineEnd = nil, false
		}
	}
	return out, nil
}

// newestEvents parses the whole lines at the end of buf (which ends in a
// newline), newest first, onto out until it holds n events, and returns
// what is left of buf. Its first line is whole only at the log's start.
func newestEvents(buf []byte, out []Event, n int, atStart bool) ([]byte, []Event) {
	for len(out) < n && len(buf) > 0 {
		body := buf[:len(buf)-1]
		i := bytes.LastIndexByte(body, '\n')
		if i < 0 && !atStart {
			break // the line starts in an earlier chunk
		}
		line := body[i+1:]
		buf = buf[:i+1]
		var e Event
		if json.Unmarshal(line, &e) == nil {
			out = append(out, e)
		}
	}
	return buf, out
}
