package workers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// StateDir holds one JSON file per worker, relative to the project; the
// worker driver writes them (var/ is git-ignored), watch status reads them.
const StateDir = "var/fleet/workers"

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

	File string `json:"-"` // where it was read from
}

// Stamp is a time written either as Unix seconds (as leases are) or as an
// RFC 3339 string; zero when absent.
type Stamp struct{ time.Time }

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

// ReadStates reads every state file of project, by agent id. A file that
// cannot be read is reported in problems, one line each, and skipped.
func ReadStates(project string) (states []State, problems []string) {
	files, _ := filepath.Glob(filepath.Join(project, filepath.FromSlash(StateDir), "*.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f, errText(err)))
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
