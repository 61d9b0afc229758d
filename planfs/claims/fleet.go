package claims

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
)

// Fleet is a remote backend that also carries each running worker's
// record, so a cockpit on any machine sees every machine's workers: the
// driver publishes at each heartbeat, a reader judges what it reads on its
// own clock, and a stop or a message sent from elsewhere travels with the
// record (mail.go).
type Fleet interface {
	// Publish writes rec as its worker's record (one push or one
	// transaction). A stop request and the messages addressed to rec.Run
	// come back: the driver obeys the stop as it would a local stop, and
	// hands the messages on (each at least once: it drops repeats).
	Publish(ctx context.Context, rec WorkerRecord) (Inbound, error)
	// Workers reads the published records, judged on this machine's
	// clock: at most MaxWorkers, chosen by Pick, and a row saying how many
	// more there are.
	Workers(ctx context.Context) ([]Published, error)
	// Worker reads host's agent's own record directly, never through
	// Workers' capped choice, judged as Workers judges it; ErrNoWorker
	// when there is none.
	Worker(ctx context.Context, host, agent string) (Published, error)
	// RequestStop asks host's agent to stop, in the record it published;
	// ErrNoWorker when there is none, ErrWorkerDone when it has exited.
	RequestStop(ctx context.Context, host, agent string, req StopRequest) error
	// Send leaves m for host's agent's current run (m.Run is set from its
	// record), read by its driver's next publish: ErrNoWorker and
	// ErrWorkerDone as RequestStop, ErrBadMessage for a message that
	// has a Problem, ErrMailFull when MaxMail wait unread.
	Send(ctx context.Context, host, agent string, m Message) error
}

// WorkerRecord is one worker as its driver publishes it: plain fields,
// so every backend stores it as one JSON document. Its wall-clock stamps
// are shown, never judged: readers judge a record by how long they have
// seen it unchanged (Published.SeenFor).
type WorkerRecord struct {
	AgentID  string `json:"agent_id"`
	Host     string `json:"host"`
	Tier     string `json:"tier,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	Model    string `json:"model,omitempty"`
	Plan     string `json:"plan,omitempty"`
	// State is "running" or "exited" (the driver finished and said so).
	State    string `json:"state"`
	ExitCode *int   `json:"exit_code,omitempty"`
	// Run tells this driver's run from the next of the same agent: a stop
	// request names the run it is for.
	Run string `json:"run"`
	PID int    `json:"pid,omitempty"`
	// Started and Heartbeat are Unix seconds on the writer's clock.
	Started   float64 `json:"started,omitempty"`
	Heartbeat float64 `json:"heartbeat,omitempty"`
	// HeartbeatEvery is the publishing interval in seconds: a record not
	// seen changing for two of them is stale. TTL (seconds) is the
	// worker's lease's: a record unchanged that long is dead.
	HeartbeatEvery float64 `json:"heartbeat_every,omitempty"`
	TTL            float64 `json:"ttl,omitempty"`
	Tokens         int64   `json:"tokens,omitempty"`
	Cost           float64 `json:"cost,omitempty"`
	Paused         string  `json:"paused,omitempty"`
	Note           string  `json:"note,omitempty"`
	// LastLine is the log's last line; LogPath where the log is on Host;
	// Serve the address of Host's `fleetwatch serve`, when it runs one.
	LastLine string `json:"last_line,omitempty"`
	LogPath  string `json:"log_path,omitempty"`
	Serve    string `json:"serve,omitempty"`
	// Stop is a stop request someone wrote into the record.
	Stop *StopRequest `json:"stop,omitempty"`
	// Asking is the question or permission request the run waits on.
	Asking *AskRecord `json:"asking,omitempty"`
}

// StopRequest asks the driver of Run to stop its agent and give its plan
// back; By (on Host, at At, Unix seconds) is who asked.
type StopRequest struct {
	Run  string  `json:"run"`
	By   string  `json:"by"`
	Host string  `json:"host,omitempty"`
	At   float64 `json:"at,omitempty"`
}

// Worker states a record carries.
const (
	WorkerRunning = "running"
	WorkerExited  = "exited"
)

// Health words of a published worker, as look.Health says them.
const (
	HealthLive   = "live"
	HealthStale  = "stale"
	HealthDead   = "dead"
	HealthExited = "exited"
)

// Published is one record as a read of a backend saw it.
type Published struct {
	WorkerRecord
	// Version is the record's compare-and-swap value (git: its commit).
	Version string
	// SeenFor is how long this machine has seen the record unchanged.
	SeenFor time.Duration
	// Health is live, stale, dead or exited, judged on this machine's
	// clock (Judge).
	Health string
	// Problem says why the record could not be read; its other fields
	// are then only what its name says (host, agent).
	Problem string
}

// Errors of RequestStop.
var (
	ErrNoWorker   = errors.New("no such worker published")
	ErrWorkerDone = errors.New("the worker has exited")
)

// MaxRecord bounds a record as stored; a larger one from another machine
// is refused, not read.
const MaxRecord = 16 << 10

// MaxWorkers and MaxWorkersPerHost bound the records one read shows: a
// remote holding more (a flood, or years never pruned) is shown up to them
// (Pick), and the rest said in one problem row, so junk under one host
// name cannot push every other host's workers out of view.
const (
	MaxWorkers        = 2048
	MaxWorkersPerHost = 256
)

// Pick says which of recs (in name order) one read shows: the readable
// records first, then those that cannot be read, at most MaxWorkersPerHost
// of one host and MaxWorkers in all; within each kind the hosts take turns,
// each giving its next record in name order. more is how many are left out.
func Pick(recs []Published) (keep []bool, more int) {
	keep = make([]bool, len(recs))
	perHost := map[string]int{}
	total := 0
	for _, readable := range []bool{true, false} {
		byHost := map[string][]int{}
		var hosts []string
		for i, p := range recs {
			if (p.Problem == "") != readable {
				continue
			}
			if _, ok := byHost[p.Host]; !ok {
				hosts = append(hosts, p.Host)
			}
			byHost[p.Host] = append(byHost[p.Host], i)
		}
		for turn := 0; len(hosts) > 0; turn++ {
			next := hosts[:0]
			for _, h := range hosts {
				q := byHost[h]
				if total >= MaxWorkers || perHost[h] >= MaxWorkersPerHost || turn >= len(q) {
					continue
				}
				keep[q[turn]] = true
				perHost[h]++
				total++
				next = append(next, h)
			}
			hosts = next
		}
	}
	return keep, len(recs) - total
}

// Bounds of a record's text fields, so a hostile or broken writer cannot
// flood a reader's screen.
const (
	maxField    = 256
	maxLastLine = 300
	maxLogPath  = 1024
)

// Prune is how long a record must be seen unchanged before a writer
// deletes it: a worker that exited, or died, a day ago.
const Prune = 24 * time.Hour

// JudgeHeartbeat and DefaultTTL are a reader's own pace: a driver
// publishes at least every minute, and a remote lease lives DefaultTTL
// unless its worker says otherwise. A record's own heartbeat_every and ttl
// are another machine's word, taken up to MaxPace times the reader's, so a
// record cannot keep a silent worker live for months.
const (
	JudgeHeartbeat = time.Minute
	MaxPace        = 10
)

// Judge is a record's health after this machine saw it unchanged for seen:
// exited when its driver said so, dead once unchanged for its lease's TTL
// (a worker that stops publishing has lost its lease by then), stale once
// unchanged for two heartbeats, else live. Its heartbeat and TTL count up
// to MaxPace times the reader's own.
func Judge(rec WorkerRecord, seen time.Duration) string {
	every := secs(rec.HeartbeatEvery, JudgeHeartbeat)
	ttl := secs(rec.TTL, DefaultTTL)
	switch {
	case rec.State == WorkerExited:
		return HealthExited
	case seen >= max(ttl, 2*every):
		return HealthDead
	case seen >= 2*every:
		return HealthStale
	}
	return HealthLive
}

// secs is s seconds, def when s says nothing (zero, negative, NaN), at most
// MaxPace times def.
func secs(s float64, def time.Duration) time.Duration {
	switch {
	case !(s > 0):
		return def
	case s >= MaxPace*def.Seconds():
		return MaxPace * def
	}
	return time.Duration(s * float64(time.Second))
}

// EncodeRecord is rec as stored, bounded first; a question so long (with
// JSON's escapes) that the record would pass MaxRecord goes shorter and
// without its options, so readers never refuse a worker for its question.
func EncodeRecord(rec WorkerRecord) []byte {
	rec = rec.Bounded()
	data, _ := json.Marshal(rec)
	if len(data) > MaxRecord && rec.Asking != nil {
		a := *rec.Asking
		a.Question, a.Options = Clip(a.Question, 200), nil
		rec.Asking = &a
		data, _ = json.Marshal(rec)
	}
	return data
}

// DecodeRecord reads a stored record from another machine: size bounded,
// every text field cut to its bound and made safe for a terminal. name
// says where it came from, for the error.
func DecodeRecord(name string, data []byte) (WorkerRecord, error) {
	if len(data) > MaxRecord {
		return WorkerRecord{}, fmt.Errorf("worker record %s: %d bytes, more than %d", name, len(data), MaxRecord)
	}
	var rec WorkerRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return WorkerRecord{}, fmt.Errorf("worker record %s: %v", name, err)
	}
	if rec.AgentID == "" || rec.Host == "" {
		return WorkerRecord{}, fmt.Errorf("worker record %s: no agent_id or host", name)
	}
	return rec.Bounded(), nil
}

// Bounded is rec with every text field one safe line within its bound.
func (rec WorkerRecord) Bounded() WorkerRecord {
	for _, f := range []*string{&rec.AgentID, &rec.Host, &rec.Tier, &rec.Endpoint, &rec.Model, &rec.Plan,
		&rec.State, &rec.Run, &rec.Paused, &rec.Note, &rec.Serve} {
		*f = Clip(*f, maxField)
	}
	rec.LastLine = Clip(rec.LastLine, maxLastLine)
	rec.LogPath = Clip(rec.LogPath, maxLogPath)
	if rec.Stop != nil {
		s := *rec.Stop
		s.Run, s.By, s.Host = Clip(s.Run, maxField), Clip(s.By, maxField), Clip(s.Host, maxField)
		rec.Stop = &s
	}
	if rec.Asking != nil {
		a := rec.Asking.Bounded()
		rec.Asking = &a
	}
	return rec
}

// Clip is s as one terminal-safe line of at most n bytes, cut on a rune.
func Clip(s string, n int) string {
	s = termtext.Line(strings.ToValidUTF8(s, "?"))
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// StopFor is rec's stop request when it is addressed to run.
func (rec WorkerRecord) StopFor(run string) *StopRequest {
	if rec.Stop != nil && rec.Stop.Run == run && run != "" {
		return rec.Stop
	}
	return nil
}

// FleetWatcher is a Fleet that says when a record changes (etcd), so a
// face reads the workers again at once rather than on its timer.
type FleetWatcher interface {
	// FleetChanges receives after each change of a record, until ctx ends.
	FleetChanges(ctx context.Context) <-chan struct{}
}
