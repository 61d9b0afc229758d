package look

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// MaxTouched bounds State.Touched: a build that touches more is listed in
// part, with the rest counted.
const MaxTouched = 500

// maxOverlapChecks bounds the pairs git is asked about in one call: eight
// workers all touching one file make 28.
const maxOverlapChecks = 28

// overlapTimeout bounds each git call of the radar.
const overlapTimeout = 30 * time.Second

// Overlap is two running workers whose changes touch the same paths (the
// overlap radar).
type Overlap struct {
	A, B  string   // agent ids, A < B
	Paths []string // the paths both touch, sorted
	// Checked says git merge-tree was asked whether the two changes, as
	// they stand in their worktrees, merge; Conflict is its answer and
	// Conflicts the paths it could not merge.
	Checked   bool
	Conflict  bool
	Conflicts []string
	// Note says why it could not be checked, when it could not.
	Note string
}

// Overlaps finds the running workers of states (their Touched lists) that
// touch the same paths, and asks git whether each pair's changes conflict.
// Each worktree is snapshotted (HEAD plus its uncommitted changes) into a
// commit through a temporary index, so no ref, index or file of a worker
// changes; a snapshot is made once per call whatever the number of pairs.
// Cost: three git calls per worker in an overlap (its whole work tree
// hashed against its index) and one merge-tree per pair, so a face calls it
// when the Touched lists change, not on every frame.
func Overlaps(project string, states []State) []Overlap {
	run := touchingRuns(states)
	out := touchingPairs(run)
	snaps := snapshots{project: project, byID: map[string]State{}, made: map[string]snapshot{}}
	for _, st := range run {
		snaps.byID[st.AgentID] = st
	}
	for k := range out {
		o := &out[k]
		if k >= maxOverlapChecks {
			o.Note = fmt.Sprintf("not checked: more than %d overlapping pairs", maxOverlapChecks)
			continue
		}
		checkOverlap(project, o, snaps.of(o.A), snaps.of(o.B))
	}
	return out
}

// touchingRuns are the running workers with a worktree that touched a
// file, each's Touched sorted, by agent id.
func touchingRuns(states []State) []State {
	var run []State
	for _, st := range states {
		if st.State == StateRunning && st.Worktree != "" && len(st.Touched) > 0 {
			st.Touched = slices.Clone(st.Touched)
			slices.Sort(st.Touched)
			run = append(run, st)
		}
	}
	slices.SortFunc(run, func(a, b State) int { return strings.Compare(a.AgentID, b.AgentID) })
	return run
}

// touchingPairs are the pairs of runs that touched a file in common.
func touchingPairs(run []State) []Overlap {
	var out []Overlap
	for i := range run {
		for j := i + 1; j < len(run); j++ {
			if common := intersect(run[i].Touched, run[j].Touched); len(common) > 0 {
				out = append(out, Overlap{A: run[i].AgentID, B: run[j].AgentID, Paths: common})
			}
		}
	}
	return out
}

// snapshots makes each worker's snapshot once, on first asking.
type snapshots struct {
	project string
	byID    map[string]State
	made    map[string]snapshot
}

func (s snapshots) of(agent string) snapshot {
	if snap, ok := s.made[agent]; ok {
		return snap
	}
	st := s.byID[agent]
	dir := st.Worktree
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(s.project, dir)
	}
	var snap snapshot
	snap.commit, snap.err = tree.SnapshotCommit(dir, "fleetwatch: overlap radar snapshot of agent "+st.AgentID, overlapTimeout)
	s.made[agent] = snap
	return snap
}

// checkOverlap merges the pair o's snapshots a and b to find whether their
// changes conflict, or notes why it cannot.
func checkOverlap(project string, o *Overlap, a, b snapshot) {
	switch {
	case a.err != nil:
		o.Note = "cannot snapshot " + o.A + "'s worktree: " + tree.ErrText(a.err)
	case b.err != nil:
		o.Note = "cannot snapshot " + o.B + "'s worktree: " + tree.ErrText(b.err)
	default:
		var err error
		o.Conflicts, o.Conflict, err = mergeConflicts(project, a.commit, b.commit)
		o.Checked = err == nil
		if err != nil {
			o.Note = tree.ErrText(err)
		}
	}
}

// snapshot is one worktree as a commit, or why it could not be made.
type snapshot struct {
	commit string
	err    error
}

// mergeConflicts asks git whether commits a and b merge: the paths it
// could not merge, and whether there were any. The merged tree is written
// to the object store only; no ref, index or work tree changes.
func mergeConflicts(dir, a, b string) ([]string, bool, error) {
	r, err := gitenv.Run(context.Background(), gitenv.Call{
		Dir:     dir,
		Args:    []string{"merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", a, b},
		Timeout: overlapTimeout,
	})
	switch {
	case err == nil:
		return nil, false, nil
	case r.Code != 1:
		return nil, false, err
	}
	// Exit 1: the tree's id, then each conflicted path, NUL-ended.
	f := strings.Split(strings.TrimSuffix(string(r.Out), "\x00"), "\x00")
	var paths []string
	for _, p := range f[1:] {
		// The worktree's backend file is not the agent's change.
		if p != "" && p != tree.EnvFile {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	return paths, len(paths) > 0 || len(f) == 1, nil
}

// intersect is the paths in both sorted lists, sorted.
func intersect(a, b []string) []string {
	var out []string
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch c := strings.Compare(a[i], b[j]); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}
