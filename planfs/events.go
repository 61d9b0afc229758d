package planfs

import (
	"bufio"
	"encoding/json"
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
}

// EventsFile is the event log's path relative to .plans/.
const EventsFile = "logs/events.jsonl"

// appendEvent writes one line with O_APPEND in a single write, so lines from
// concurrent workers never interleave. Failing to log never fails a verb that
// already changed the tree.
func (t *Tree) appendEvent(e Event) {
	e.TS = t.Now().UTC().Format(time.RFC3339Nano)
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	p := filepath.Join(t.Plans, EventsFile)
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	_, _ = f.Write(append(b, '\n'))
	_ = f.Close()
}

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
// last event that put it there (a claim or a park).
func (t *Tree) eventOrigin(rel string) string {
	events, _ := t.Events()
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].To == rel {
			if events[i].Origin != "" {
				return events[i].Origin
			}
			return events[i].From
		}
	}
	return ""
}
