// Package ledger keeps what each run spent, one record per run appended to
// var/fleet/usage/runs.jsonl — under var/fleet/, which agents cannot write
// — and sums it by plan, tier, endpoint, model, agent or day for `fleetwatch
// usage`. A record is one line written with O_APPEND in a single write, so
// drivers on one machine never interleave; a line that does not read (a
// torn write, a hand edit) is skipped and counted, never fatal.
package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/workers/meter"
)

// File is the ledger's path from the project's root.
const File = "var/fleet/usage/runs.jsonl"

// Source says where a run's usage came from.
const (
	Metered  = "metered"  // read by the driver's proxy from the endpoint's answers
	Reported = "reported" // the agent's own report
	None     = "none"     // neither: the run spent what nobody counted
)

// Run is one run's record.
type Run struct {
	ID       string    `json:"run"`
	Plan     string    `json:"plan"`
	Agent    string    `json:"agent"`
	Tier     string    `json:"tier,omitempty"`
	Endpoint string    `json:"endpoint,omitempty"`
	Model    string    `json:"model,omitempty"`
	Host     string    `json:"host,omitempty"`
	Input    int64     `json:"input_tokens"`
	Output   int64     `json:"output_tokens"`
	Cached   int64     `json:"cached_tokens,omitempty"`
	CostUSD  float64   `json:"cost_usd"`
	Priced   bool      `json:"priced"` // false: no price for the model and no cost reported
	Source   string    `json:"source"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Exit     int       `json:"exit"`
	// Mode is the turn: build, plan or review.
	Mode string `json:"mode,omitempty"`
	// Claim is what the run said of its work (ParseResult), Committed
	// whether it left a commit on its branch.
	Claim     string `json:"claim,omitempty"`
	Committed bool   `json:"committed"`
	// NotDaily marks figures only the agent vouches for from a run its
	// proxy metered and saw spend nothing: they count against the run's
	// and its plan's budgets, never against a day's (the fleet's, an
	// endpoint's, a tier's), so no report can stop the fleet.
	NotDaily bool `json:"not_daily,omitempty"`
	// Estimated is how many of the run's metered calls answered with no
	// usage that could be read, counted from their bytes instead
	// (meter.Estimate).
	Estimated int `json:"estimated_calls,omitempty"`
	// Session is the agent's session id as its tool printed it, to
	// resume the conversation (look.LastSession).
	Session string `json:"session,omitempty"`
}

// Tokens is the run's tokens in and out.
func (r Run) Tokens() int64 { return r.Input + r.Output }

// Priced is u's cost at prices (by model name), and whether it has one: a
// cost the agent reported, or a price for its model.
func Priced(u meter.Usage, prices map[string]meter.Price) (float64, bool) {
	if u.CostUSD > 0 {
		return u.CostUSD, true
	}
	p, ok := prices[u.Model]
	if !ok {
		return 0, u.Tokens() == 0
	}
	return u.Cost(p), true
}

// Append adds r to project's ledger.
func Append(project string, r Run) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := safepath.OpenFile(project, File, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("usage ledger: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("usage ledger: %w", err)
	}
	return nil
}

// Read calls fn with every run in project's ledger that ended at or after
// since, in the order they were written, and returns how many lines did not
// read. A project with no ledger yet has no runs.
func Read(project string, since time.Time, fn func(Run)) (bad int, err error) {
	f, err := safepath.OpenFile(project, File, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("usage ledger: %w", err)
	}
	defer f.Close()
	return scan(f, since, fn)
}

// chunk is how much of the ledger one goroutine decodes at a time.
const chunk = 1 << 20

// scan decodes r's lines a batch of chunks at a time, one goroutine per
// chunk (decoding is most of `usage`'s time), and hands fn the runs in
// file order.
func scan(r io.Reader, since time.Time, fn func(Run)) (int, error) {
	br := bufio.NewReaderSize(r, chunk)
	workers := max(runtime.GOMAXPROCS(0), 1)
	bad := 0
	for {
		blocks, err := readBlocks(br, workers)
		runs := make([][]Run, len(blocks))
		bads := make([]int, len(blocks))
		var wg sync.WaitGroup
		for i, b := range blocks {
			wg.Go(func() { runs[i], bads[i] = decode(b, since) })
		}
		wg.Wait()
		for i := range blocks {
			bad += bads[i]
			for _, run := range runs[i] {
				fn(run)
			}
		}
		if err == io.EOF {
			return bad, nil
		}
		if err != nil {
			return bad, fmt.Errorf("usage ledger: %w", err)
		}
	}
}

// readBlocks reads up to n blocks of about a chunk each, every one ending
// at a line's end (or the file's).
func readBlocks(br *bufio.Reader, n int) ([][]byte, error) {
	var out [][]byte
	for range n {
		b := make([]byte, chunk)
		k, err := io.ReadFull(br, b)
		b = b[:k]
		if err == nil {
			rest, rerr := br.ReadBytes('\n')
			b, err = append(b, rest...), rerr
		}
		if len(b) > 0 {
			out = append(out, b)
		}
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func decode(b []byte, since time.Time) (runs []Run, bad int) {
	runs = make([]Run, 0, bytes.Count(b, []byte{'\n'})+1)
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		run, err := parseRun(line)
		if err != nil || run.ID == "" {
			bad++
			continue
		}
		if since.IsZero() || !run.End.Before(since) {
			runs = append(runs, run)
		}
	}
	return runs, bad
}

// Keys are what `usage --by` groups runs by.
var Keys = []string{"plan", "tier", "endpoint", "model", "agent", "day"}

// KeyOf is r's group under by (one of Keys); "-" where the run has none.
func KeyOf(r Run, by string) string {
	var k string
	switch by {
	case "plan":
		k = r.Plan
	case "tier":
		k = r.Tier
	case "endpoint":
		k = r.Endpoint
	case "model":
		k = r.Model
	case "agent":
		k = r.Agent
	case "day":
		k = r.End.Local().Format(time.DateOnly)
	}
	if k == "" {
		return "-"
	}
	return k
}

// Group is the sum of the runs that share a key.
type Group struct {
	Key      string  `json:"key"`
	Runs     int     `json:"runs"`
	Input    int64   `json:"input_tokens"`
	Output   int64   `json:"output_tokens"`
	Cached   int64   `json:"cached_tokens"`
	CostUSD  float64 `json:"cost_usd"`
	Unpriced int     `json:"unpriced_runs"` // runs whose tokens have no price
	Reported int     `json:"reported_runs"` // runs whose usage only the agent vouches for
	// Estimated are runs with calls counted from their bytes (Run.Estimated).
	Estimated int `json:"estimated_runs"`
}

// Sums adds runs up by one key as they are read, so a ledger of any
// length is summed without holding its runs.
type Sums struct {
	by  string
	idx map[string]int
	out []Group
}

// NewSums sums by by, one of Keys.
func NewSums(by string) *Sums { return &Sums{by: by, idx: map[string]int{}} }

// Add counts r in its group.
func (s *Sums) Add(r Run) {
	k := KeyOf(r, s.by)
	i, ok := s.idx[k]
	if !ok {
		i = len(s.out)
		s.idx[k] = i
		s.out = append(s.out, Group{Key: k})
	}
	g := &s.out[i]
	g.Runs++
	g.Input += r.Input
	g.Output += r.Output
	g.Cached += r.Cached
	g.CostUSD += r.CostUSD
	if !r.Priced {
		g.Unpriced++
	}
	if r.Source == Reported {
		g.Reported++
	}
	if r.Estimated > 0 {
		g.Estimated++
	}
}

// Groups are the sums, the costliest group first (then the most tokens,
// then the key, so the order never changes for the same ledger).
func (s *Sums) Groups() []Group {
	out := slices.Clone(s.out)
	slices.SortFunc(out, func(a, b Group) int {
		switch {
		case a.CostUSD != b.CostUSD:
			return cmpDesc(a.CostUSD, b.CostUSD)
		case a.Input+a.Output != b.Input+b.Output:
			return cmpDesc(float64(a.Input+a.Output), float64(b.Input+b.Output))
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out
}

func cmpDesc(a, b float64) int {
	if a > b {
		return -1
	}
	return 1
}
