package look

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// DetailLogLines is how many of a worker's last log lines its detail holds.
const DetailLogLines = 200

// WorktreeDetail is one worktree read whole for the operator: what the
// Worktrees pane shows, plus git's own words.
type WorktreeDetail struct {
	WorktreeState
	// Base is the integration branch ahead/behind count against.
	Base string
	// Status is `git status --short --branch`; Log `git log --oneline -n 10`.
	Status, Log string
	// StatusErr and LogErr hold one line when that git call failed.
	StatusErr, LogErr string
}

// ReadWorktreeDetail asks git about agentID's worktree: the registry's
// entry (or the one Lookup finds), ahead/behind, status and the last ten
// commits. Like Inspect it takes no git locks and changes nothing.
func ReadWorktreeDetail(project, agentID string) (WorktreeDetail, error) {
	wt, ok, err := findWorktree(project, agentID)
	if err != nil {
		return WorktreeDetail{}, err
	}
	if !ok {
		return WorktreeDetail{}, fmt.Errorf("%s has no worktree", agentID)
	}
	integration := sync.OnceValues(func() (string, error) { return FindIntegration(project) })
	base, _ := integrationRef(wt, integration)
	d := WorktreeDetail{WorktreeState: inspect(wt, integration), Base: ShortRef(base)}
	if !d.Exists {
		return d, nil
	}
	if d.Status, err = gitQuery(wt.Path, "status", "--short", "--branch", "--untracked-files=normal"); err != nil {
		d.StatusErr = err.Error()
	}
	if d.Log, err = gitQuery(wt.Path, "log", "--no-color", "--oneline", "--no-decorate", "-n", "10"); err != nil {
		d.LogErr = err.Error()
	}
	return d, nil
}

// findWorktree is agentID's registry entry even when its folder is gone
// (the detail says so), else what Lookup finds.
func findWorktree(project, agentID string) (tree.Worktree, bool, error) {
	wts, err := List(project)
	if err != nil {
		return tree.Worktree{}, false, err
	}
	for _, wt := range wts {
		if wt.AgentID == agentID {
			return wt, true, nil
		}
	}
	return Lookup(project, agentID)
}

// WorkerDetail is one worker read whole: its state file as parsed and as
// written, and the end of its log.
type WorkerDetail struct {
	State State
	// Raw is the state file's bytes; Fields its top-level keys as parsed
	// generically, so fields this version does not know still show.
	Raw    []byte
	Fields map[string]json.RawMessage
	// StateErr is why the state file could not be read or parsed.
	StateErr string
	// Log is the last DetailLogLines lines, each cut and made safe as a
	// Tail delivers them; LogErr why the log could not be read.
	Log                      []string
	LogFile, LogErr          string
	StateFile                string
	StateMissing, LogMissing bool
}

// ReadWorkerDetail reads agentID's state file (bounded, never a FIFO) and
// the last DetailLogLines lines of its log. A missing or corrupt file is
// said in the detail, not an error: the operator opened it to see why.
func ReadWorkerDetail(project, agentID string) WorkerDetail {
	d := WorkerDetail{StateFile: StatePath(project, agentID), LogFile: LogPath(project, agentID)}
	raw, err := ReadStateFile(d.StateFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.StateMissing = true
	case err != nil:
		d.StateErr = tree.ErrText(err)
	default:
		d.Raw = raw
		if err := json.Unmarshal(raw, &d.State); err != nil {
			d.StateErr = err.Error()
		}
		_ = json.Unmarshal(raw, &d.Fields)
	}
	f := &follower{path: filepath.Clean(d.LogFile)}
	lines, err := f.backlog(DetailLogLines)
	switch {
	case err != nil:
		d.LogErr = err.Error()
	case f.f == nil:
		d.LogMissing = true
	}
	f.close()
	d.Log = lines
	return d
}
