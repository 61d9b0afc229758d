package look

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// StateDir holds one JSON file per worker, relative to the project; the
// worker driver writes them (var/ is git-ignored), watch status and the UI
// read them.
const StateDir = "var/fleet/workers"

// LogDir holds one log file per worker, relative to the project: the
// executor's output and the driver's own lines, timestamped.
const LogDir = "var/fleet/logs"

// Worker states as the driver records them.
const (
	StateRunning = "running"
	StateExited  = "exited"
)

// StatePath is agentID's state file in project.
func StatePath(project, agentID string) string {
	return filepath.Join(project, filepath.FromSlash(StateDir), tree.SafeID(agentID)+".json")
}

// LogPath is agentID's log file in project.
func LogPath(project, agentID string) string {
	return filepath.Join(project, filepath.FromSlash(LogDir), tree.SafeID(agentID)+".log")
}

// State is one worker's state file: who it is, what it holds, how its last
// run went.
type State struct {
	PID           int    `json:"pid"`
	AgentID       string `json:"agent_id"`
	Tier          string `json:"tier"`
	Model         string `json:"model"`
	Plan          string `json:"plan"`
	Worktree      string `json:"worktree"`
	Port          int    `json:"port"`
	Started       Stamp  `json:"started"`
	LastHeartbeat Stamp  `json:"last_heartbeat"`
	State         string `json:"state"`
	ExitCode      *int   `json:"exit_code"`
	// Host is where PID runs: a pid means nothing on another machine.
	Host string `json:"host,omitempty"`
	// HeartbeatEvery is the driver's heartbeat interval in seconds; a
	// running worker silent for two of them is stale.
	HeartbeatEvery float64 `json:"heartbeat_every,omitempty"`
	Endpoint       string  `json:"endpoint,omitempty"`
	// Note says why the worker exited or what it is doing, in a few words.
	Note string `json:"note,omitempty"`
	// Mode is the running turn's: build, or plan (a plan-first plan's
	// plan-only turn).
	Mode string `json:"mode,omitempty"`
	// The scope scanner's word on the running build. Scope is a few words:
	// "no scope check" (none declared), "in scope", "2 paths out of scope".
	// Touched is every path the change touches (at most MaxTouched, sorted;
	// TouchedMore counts the rest); Violations those outside the scope or
	// under .plans/.
	Scope       string   `json:"scope,omitempty"`
	Touched     []string `json:"touched,omitempty"`
	TouchedMore int      `json:"touched_more,omitempty"`
	Violations  []string `json:"violations,omitempty"`
	// Contained says how the driver's agents run: "agents are contained
	// (Landlock ABI 7)", or why they are not.
	Contained string `json:"contained,omitempty"`
	// Agent is the running agent (its pid is its process group) and
	// Adopted the daemons it left that the driver adopted, with their
	// start times: what the next driver or a recover stops when this
	// driver dies with them still running (leftovers.go).
	// Paused says why the running agent is stopped where it is (its
	// budget reached, or the operator's pause); Spent is what its run has
	// spent so far.
	Paused   string        `json:"paused,omitempty"`
	PausedAt Stamp         `json:"paused_at,omitzero"`
	Spent    ledger.Totals `json:"spent,omitzero"`
	// Pausable: this driver pauses and resumes its run on SIGUSR1 and
	// SIGUSR2 (Pause); to any other program they are fatal.
	Pausable bool `json:"pausable,omitempty"`
	// Asking is the question or permission request the running
	// conversation waits on a person for (the oldest, when several).
	Asking  *claims.AskRecord `json:"asking,omitempty"`
	Agent   *Proc             `json:"agent,omitempty"`
	Adopted []Proc            `json:"adopted,omitempty"`
	// Cgroup is the agent's cgroup, where it has one: all it forked.
	Cgroup string `json:"cgroup,omitempty"`
	// Session is the agent's session when it leads one (its pid): every
	// process still in it is the run's.
	Session int `json:"session,omitempty"`

	File string `json:"-"` // where it was read from
}

// Stamp is a time written either as Unix seconds (as leases are) or as an
// RFC 3339 string; zero when absent.
type Stamp struct{ time.Time }

// MarshalJSON writes RFC 3339 in UTC, or null when zero.
func (s Stamp) MarshalJSON() ([]byte, error) {
	if s.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(s.UTC().Format(time.RFC3339Nano))
}

// UnmarshalJSON takes a number of seconds or an RFC 3339 string.
func (s *Stamp) UnmarshalJSON(b []byte) error {
	v := strings.TrimSpace(string(b))
	if v == "null" || v == `""` {
		return nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		s.Time = time.Unix(0, int64(f*1e9))
		return nil
	}
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return fmt.Errorf("time %s: want seconds or RFC 3339", v)
	}
	t, err := time.Parse(time.RFC3339Nano, str)
	if err != nil {
		return fmt.Errorf("time %q: want seconds or RFC 3339", str)
	}
	s.Time = t
	return nil
}

// WriteState replaces st's state file atomically, so a reader never sees
// half of one.
func WriteState(project string, st State) error {
	p := StatePath(project, st.AgentID)
	if err := tree.FleetDir(project); err != nil {
		return err
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return tree.WriteAtomicIn(project, p, append(data, '\n'))
}

// ReadStates reads every state file of project, by agent id. A file that
// cannot be read is reported in problems, one line each, and skipped.
func ReadStates(project string) (states []State, problems []string) {
	files, _ := filepath.Glob(filepath.Join(project, filepath.FromSlash(StateDir), "*.json"))
	for _, f := range files {
		data, err := ReadStateFile(f)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f, tree.ErrText(err)))
			continue
		}
		var st State
		if err := json.Unmarshal(data, &st); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f, err))
			continue
		}
		if st.AgentID == "" {
			st.AgentID = strings.TrimSuffix(filepath.Base(f), ".json")
		}
		st.File = f
		states = append(states, st)
	}
	sort.Slice(states, func(i, j int) bool { return states[i].AgentID < states[j].AgentID })
	return states, problems
}

// maxStateFile bounds how much of a state file is read; real ones are a
// few hundred bytes.
const maxStateFile = 64 << 10

// ReadStateFile reads one state file. Anything but a regular file is
// refused without blocking: opening a FIFO for reading would wait for a
// writer.
func ReadStateFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxStateFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxStateFile {
		return nil, fmt.Errorf("larger than %d KiB; not a state file", maxStateFile>>10)
	}
	return data, nil
}

// Health is what a state file says about a worker once time and the process
// table are taken into account.
type Health string

const (
	Live   Health = "live"   // running and heartbeating
	Stale  Health = "stale"  // running, but no heartbeat for two intervals
	Dead   Health = "dead"   // says running, but its process is gone
	Exited Health = "exited" // finished and said so
)

// Health judges st at now. A pid is only checked when st was written on
// this host; elsewhere a silent worker can only be stale.
func (st State) Health(now time.Time) Health {
	if st.State != StateRunning {
		return Exited
	}
	if st.PID > 0 && st.Host == Hostname() && !ProcessAlive(st.PID) {
		return Dead
	}
	every := st.HeartbeatEvery
	if every <= 0 {
		every = 60
	}
	last := st.LastHeartbeat.Time
	if last.IsZero() {
		last = st.Started.Time
	}
	if now.Sub(last).Seconds() > 2*every {
		return Stale
	}
	return Live
}

// Hostname is the name this machine's workers are recorded under:
// $FLEET_HOST when set (two containers sharing a host name, or tests
// standing several machines on one), else the system's.
func Hostname() string {
	if h := os.Getenv("FLEET_HOST"); h != "" {
		return h
	}
	h, _ := os.Hostname()
	return h
}

// ProcessAlive reports whether pid names a process, one of another user
// included.
func ProcessAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Proc is one process as the state file records it.
type Proc struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"` // clock ticks after boot, from /proc/PID/stat
}

// Local reports whether st was written on this host, where its pid means
// something.
func (st State) Local() bool { return st.Host != "" && st.Host == Hostname() }
