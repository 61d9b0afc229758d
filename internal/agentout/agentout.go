// Package agentout reads what an agent CLI prints of its turn: whether it
// ended its task or failed it, the endpoint trouble it met (a rate limit,
// an overload, a refused key, a spent usage window, with when to try
// again), its session id and its error. Usage is the meter's to read
// (meter.Report). Each preset's tool prints its own shape (Claude Code's
// JSON result, Codex's and opencode's JSON events, Gemini CLI's JSON);
// every byte of it is the agent's and untrusted, so a line that does not
// parse is skipped and every text is clipped.
package agentout

import (
	"bytes"
	"time"
)

// Trouble is endpoint trouble: why a turn failed that is not the task's.
type Trouble string

const (
	NoTrouble   Trouble = ""
	RateLimited Trouble = "rate_limited" // 429: back off, or retry-after
	Overloaded  Trouble = "overloaded"   // 529, 503: back off
	AuthFailed  Trouble = "auth"         // 401, 403: the key or login is refused
	UsageWindow Trouble = "usage_window" // the subscription's window is spent until Reset
)

// Result is what a tool printed of its turn.
type Result struct {
	Seen    bool    // the tool printed a result this package read
	Failed  bool    // it says the turn failed
	Trouble Trouble // why, when it was the endpoint's doing
	Status  int     // the API status it names, 0 when none
	// RetryAfter and Reset are when the endpoint may be called again, as
	// the tool says (zero when it does not).
	RetryAfter time.Duration
	Reset      time.Time
	Session    string // its session id, to resume the conversation
	Error      string // its error, one line
}

// maxText bounds each text read from a tool's output.
const maxText = 300

// maxLine bounds one line read.
const maxLine = 4 << 20

// lineReader reads one line of a tool's output into r.
type lineReader func(r *Result, line []byte)

// readers are the presets' tools' output readers, by preset name.
var readers = map[string]lineReader{}

// Reader reads one tool's output a line at a time, as it comes.
type Reader struct {
	read lineReader
	res  Result
}

// For is a reader of preset's tool's output; a preset with no reader (a
// command: of the operator's) reads nothing.
func For(preset string) *Reader { return &Reader{read: readers[preset]} }

// Line reads one line of output.
func (r *Reader) Line(line []byte) {
	line = bytes.TrimSpace(line)
	if r == nil || r.read == nil || len(line) == 0 || len(line) > maxLine {
		return
	}
	r.read(&r.res, line)
}

// Result is what the lines so far said.
func (r *Reader) Result() Result {
	if r == nil {
		return Result{}
	}
	return r.res
}

// Of reads a tool's whole output.
func Of(preset string, out []byte) Result {
	r := For(preset)
	for _, l := range bytes.Split(out, []byte("\n")) {
		r.Line(l)
	}
	return r.Result()
}

// ForStatus is the trouble an API status means, NoTrouble for one that is
// the task's or a success.
func ForStatus(status int) Trouble {
	switch {
	case status == 429:
		return RateLimited
	case status == 529 || status == 503:
		return Overloaded
	case status == 401 || status == 403:
		return AuthFailed
	}
	return NoTrouble
}

// clip keeps a text one line of at most maxText bytes, on a rune boundary.
func clip(s string) string {
	if i := bytes.IndexAny([]byte(s), "\r\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) <= maxText {
		return s
	}
	s = s[:maxText]
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s
}
