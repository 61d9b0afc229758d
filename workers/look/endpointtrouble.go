package look

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/agentout"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// A run ends as one of three: done, the task failed, or endpoint trouble
// (a rate limit, an overload, a refused key, a spent usage window), read
// from the tool's own result (agentout) and the answers its metering
// proxy saw, never from the exit code alone. Endpoint trouble is not the
// plan's: it goes back to its lane at once, for another endpoint, and the
// endpoint is marked so no worker calls it until it may be called again:
//
//	backing-off  a rate limit or an overload: 30 s, doubling to 10 min
//	             while the trouble lasts, or the retry-after it was given
//	disabled     its key or login was refused: until the operator clears it
//	shut         its usage window is spent: until the window's reset
//
// The state is a small JSON file per endpoint under endpointDir, read
// before every claim (EndpointProblem); a run that ends done clears it.
// With claims in a remote backend it is also published there
// (claims.EndpointBoard), and a worker on any machine reads it before
// claiming, so none calls an endpoint another machine found shut.

// endpointDir holds one JSON file per endpoint in trouble, relative to the
// project.
const endpointDir = "var/fleet/endpoints"

// An endpoint's states.
const (
	EndpointBackingOff = "backing-off"
	EndpointDisabled   = "disabled"
	EndpointShut       = "shut"
)

const (
	firstBackoff = 30 * time.Second
	maxBackoff   = 10 * time.Minute
	// unsaidWindow is how long a spent window whose reset nobody said
	// stays shut before a run tries again.
	unsaidWindow = time.Hour
	// maxShut bounds how far ahead a reset or a retry-after is believed:
	// the agent's own word can shut its endpoint, never for long.
	maxShut = 8 * 24 * time.Hour
)

// EndpointState is an endpoint's trouble as stored and published.
type EndpointState struct {
	Name    string           `json:"name"`
	State   string           `json:"state"`
	Trouble agentout.Trouble `json:"trouble"`
	Status  int              `json:"status,omitempty"`
	Reason  string           `json:"reason"`
	Since   time.Time        `json:"since"`
	// Until is when it may be called again; zero while disabled.
	Until time.Time `json:"until,omitzero"`
	// Reset is a spent window's reset, as the API or the tool said it.
	Reset time.Time `json:"reset,omitzero"`
	// Backoff is the last backoff in seconds, doubled by the next.
	Backoff float64 `json:"backoff,omitempty"`
	Host    string  `json:"host,omitempty"`
}

// Problem says why st stops claims at now, "" when it no longer does.
func (st EndpointState) Problem(now time.Time) string {
	switch {
	case st.State == EndpointDisabled:
		return fmt.Sprintf("endpoint %s is disabled since %s: %s; clear it once fixed: fleetwatch endpoints clear %s",
			st.Name, UTCText(st.Since), st.Reason, st.Name)
	case (st.State == EndpointShut || st.State == EndpointBackingOff) && now.Before(st.Until):
		return fmt.Sprintf("endpoint %s is %s until %s (%s): %s", st.Name, st.State, UTCText(st.Until), st.Until.Sub(now).Round(time.Second), st.Reason)
	}
	return ""
}

// UTCText is t as the endpoint files and messages say times: RFC 3339 in
// UTC.
func UTCText(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// EndTrouble is the endpoint trouble a run ended with.
type EndTrouble struct {
	Kind       agentout.Trouble
	Status     int
	RetryAfter time.Duration
	Reset      time.Time
	Why        string // the tool's error, or the API's status
}

// NextState is name's state after trouble t at now, given its last state
// (had: it had one).
func NextState(name string, last EndpointState, had bool, t EndTrouble, now time.Time) EndpointState {
	st := EndpointState{Name: name, Trouble: t.Kind, Status: t.Status, Reason: t.Why, Since: now, Host: Hostname()}
	after := min(max(t.RetryAfter, 0), maxShut)
	switch t.Kind {
	case agentout.AuthFailed:
		st.State = EndpointDisabled
	case agentout.UsageWindow:
		st.State, st.Reset = EndpointShut, t.Reset
		switch {
		case !t.Reset.IsZero():
			st.Until = t.Reset
		case after > 0:
			st.Until = now.Add(after)
		default:
			st.Until = now.Add(unsaidWindow)
		}
		if far := now.Add(maxShut); st.Until.After(far) {
			st.Until = far
		}
	default:
		backoff := firstBackoff
		// Trouble again soon after the last backoff ended doubles it.
		if had && last.State == EndpointBackingOff && last.Backoff > 0 && now.Sub(last.Until) < maxBackoff {
			backoff = min(2*time.Duration(last.Backoff*float64(time.Second)), maxBackoff)
		}
		st.State, st.Backoff = EndpointBackingOff, backoff.Seconds()
		st.Until = now.Add(backoff)
		if after > 0 {
			st.Until = now.Add(after)
		}
	}
	return st
}

// endpointPath is name's state file.
func endpointPath(project, name string) string {
	return filepath.Join(project, filepath.FromSlash(endpointDir), tree.SafeID(name)+".json")
}

// ReadEndpoint is name's stored state; ok is false when it has none (or
// the file cannot be read: a bad file never stops the fleet).
func ReadEndpoint(project, name string) (st EndpointState, ok bool) {
	data, err := ReadStateFile(endpointPath(project, name))
	if err != nil || json.Unmarshal(data, &st) != nil || st.State == "" {
		return EndpointState{}, false
	}
	st.Name = name
	return st, true
}

// WriteEndpoint stores st, replacing the file whole.
func WriteEndpoint(project string, st EndpointState) error {
	if err := tree.FleetDir(project); err != nil {
		return err
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return tree.WriteAtomicIn(project, endpointPath(project, st.Name), append(data, '\n'))
}

// clearEndpoint forgets name's trouble: a run on it ended well, or the
// operator fixed it.
func clearEndpoint(project, name string) error {
	err := os.Remove(endpointPath(project, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// ReadEndpoints is every endpoint's stored state, by name.
func ReadEndpoints(project string) []EndpointState {
	files, _ := filepath.Glob(filepath.Join(project, filepath.FromSlash(endpointDir), "*.json"))
	var out []EndpointState
	for _, f := range files {
		var st EndpointState
		data, err := ReadStateFile(f)
		if err != nil || json.Unmarshal(data, &st) != nil || st.State == "" {
			continue
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// EndpointProblem says why no plan may be claimed for name now, "" when
// one may: it is shut, backing off or disabled. Claims resume by
// themselves once its time has passed.
func EndpointProblem(project, name string, now time.Time) string {
	st, ok := ReadEndpoint(project, name)
	if !ok {
		return ""
	}
	return st.Problem(now)
}

// endpointWarnings are the board's lines for endpoints in trouble now.
func endpointWarnings(project string, now time.Time) []model.Warning {
	var out []model.Warning
	for _, st := range ReadEndpoints(project) {
		if why := st.Problem(now); why != "" {
			out = append(out, model.Warning{File: endpointDir + "/" + tree.SafeID(st.Name) + ".json", Message: why})
		}
	}
	return out
}

// failureDir holds a JSON file per plan whose task failed, by slug: the
// count any worker of the project reads before it parks the plan. A file
// per plan, replaced whole, so two workers failing two plans never
// write the same file.
const failureDir = "var/fleet/failures"

// Failures is a plan's task failures in a row.
type Failures struct {
	Slug  string    `json:"slug"`
	Count int       `json:"count"`
	Last  string    `json:"last"` // the last failure's reason
	At    time.Time `json:"at"`
}

func failurePath(project, slug string) string {
	return filepath.Join(project, filepath.FromSlash(failureDir), tree.SafeID(slug)+".json")
}

// PlanFailures is slug's failures in a row so far.
func PlanFailures(project, slug string) Failures {
	var f Failures
	data, err := ReadStateFile(failurePath(project, slug))
	if err != nil || json.Unmarshal(data, &f) != nil || f.Count < 0 {
		return Failures{Slug: slug}
	}
	return f
}

// AddFailure counts one more failure of slug's task; it returns the count.
func AddFailure(project, slug, why string) (int, error) {
	f := PlanFailures(project, slug)
	f.Slug, f.Count, f.Last, f.At = slug, f.Count+1, why, time.Now().UTC()
	if err := tree.FleetDir(project); err != nil {
		return f.Count, err
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return f.Count, err
	}
	return f.Count, tree.WriteAtomicIn(project, failurePath(project, slug), append(data, '\n'))
}

// ClearFailures forgets slug's failures.
func ClearFailures(project, slug string) error {
	err := os.Remove(failurePath(project, slug))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// boardTimeout bounds one publish or read of an endpoint's record.
const boardTimeout = 10 * time.Second

// PublishEndpoint writes st as name's record on board (nil st removes
// it); nothing without a board.
func PublishEndpoint(board claims.EndpointBoard, name string, st *EndpointState) error {
	if board == nil {
		return nil
	}
	var data []byte
	if st != nil {
		var err error
		if data, err = json.Marshal(st); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), boardTimeout)
	defer cancel()
	return board.PublishEndpoint(ctx, name, data)
}

// ResetEndpoint forgets name's trouble here and on board (nil: none).
func ResetEndpoint(project, name string, board claims.EndpointBoard) error {
	return errors.Join(clearEndpoint(project, name), PublishEndpoint(board, name, nil))
}

// BoardProblem says why board's record of name stops claims at now, ""
// when there is none or it no longer does. A record another machine
// wrote is kept here too, for this machine's board and `endpoints show`.
func BoardProblem(ctx context.Context, project, name string, board claims.EndpointBoard, now time.Time) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, boardTimeout)
	defer cancel()
	data, err := board.EndpointRecord(ctx, name)
	if err != nil || data == nil {
		return "", err
	}
	var st EndpointState
	if err := json.Unmarshal(data, &st); err != nil {
		return "", fmt.Errorf("endpoint %s's record: %v", name, err)
	}
	switch st.State {
	case EndpointBackingOff, EndpointDisabled, EndpointShut:
	default:
		return "", fmt.Errorf("endpoint %s's record: unknown state %q", name, claims.Clip(st.State, 40))
	}
	// Whoever could push wrote it: its texts are one bounded line.
	st.Name, st.Reason, st.Host = name, claims.Clip(st.Reason, 300), claims.Clip(st.Host, 256)
	why := st.Problem(now)
	if why != "" {
		err = WriteEndpoint(project, st)
	}
	return why, err
}
