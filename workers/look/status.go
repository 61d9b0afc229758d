package look

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// WorktreeState is what git says about one registered worktree right now.
type WorktreeState struct {
	tree.Worktree
	Exists        bool   // the path is a directory
	Dirty         bool   // uncommitted changes (git status --porcelain non-empty, untracked included)
	Ahead, Behind int    // commits of HEAD not in the integration branch, and the reverse
	Head          string // current branch name (or short sha when detached)
	Err           string // one line when git failed; the rest is then zero
}

// StatusTimeout bounds each git call of Inspect. A screen refresh must not
// wait on a huge checkout or a stuck filesystem the way a worktree add may
// (gitTimeout).
var StatusTimeout = 5 * time.Second

// inspectParallel is how many worktrees Inspect asks git about at once.
const inspectParallel = 4

// Inspect asks git about each worktree: two git calls per worktree (status,
// then ahead/behind), plus one per project to find an integration branch
// when an entry does not name one. It creates and changes nothing, and
// takes no git locks, so it can run beside the agents working there.
func Inspect(project string, wts []tree.Worktree) []WorktreeState {
	out := make([]WorktreeState, len(wts))
	integration := sync.OnceValues(func() (string, error) { return FindIntegration(project) })
	sem := make(chan struct{}, inspectParallel)
	var wg sync.WaitGroup
	for i, wt := range wts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = inspect(wt, integration)
		}()
	}
	wg.Wait()
	return out
}

func inspect(wt tree.Worktree, integration func() (string, error)) WorktreeState {
	st := WorktreeState{Worktree: wt}
	if fi, err := os.Stat(wt.Path); err != nil || !fi.IsDir() {
		return st
	}
	st.Exists = true
	failed := func(err error) WorktreeState {
		return WorktreeState{Worktree: wt, Exists: true, Err: err.Error()}
	}
	status, err := gitQuery(wt.Path, "status", "--porcelain=v2", "--branch", "--untracked-files=normal")
	if err != nil {
		return failed(err)
	}
	readStatus(&st, status)
	base, err := integrationRef(wt, integration)
	if err != nil {
		return failed(err)
	}
	counts, err := gitQuery(wt.Path, "rev-list", "--left-right", "--count", "HEAD..."+base, "--")
	if err != nil {
		return failed(err)
	}
	if st.Ahead, st.Behind, err = aheadBehind(counts); err != nil {
		return failed(err)
	}
	return st
}

// readStatus reads git status --porcelain=v2 --branch into st: its head
// (a detached one's short commit) and whether it is dirty.
func readStatus(st *WorktreeState, status string) {
	var oid string
	for _, line := range strings.Split(status, "\n") {
		switch {
		case strings.HasPrefix(line, "# branch.oid "):
			oid = strings.TrimPrefix(line, "# branch.oid ")
		case strings.HasPrefix(line, "# branch.head "):
			st.Head = strings.TrimPrefix(line, "# branch.head ")
		case line != "" && !strings.HasPrefix(line, "#"):
			st.Dirty = true
		}
	}
	if st.Head == "(detached)" {
		st.Head = oid[:min(len(oid), 7)]
	}
}

// aheadBehind reads git rev-list --left-right --count's two counts.
func aheadBehind(counts string) (ahead, behind int, err error) {
	a, b, ok := strings.Cut(counts, "\t")
	bad := fmt.Errorf("git rev-list: unexpected output %q", counts)
	if ahead, err = strconv.Atoi(a); err != nil || !ok {
		return 0, 0, bad
	}
	if behind, err = strconv.Atoi(b); err != nil {
		return 0, 0, bad
	}
	return ahead, behind, nil
}

// FindIntegration looks for the branch EnsureIntegration would pick, in its
// order, without creating one: fleetwatch.yaml's integration:, else dev or
// develop (local, then origin's), else the trunk it would be made from. One
// git call for all candidates. It returns the full ref (refs/heads/dev,
// refs/remotes/origin/dev), for git; shortRef is its name for people.
func FindIntegration(project string) (string, error) {
	names, err := tree.IntegrationNames(project)
	if err != nil {
		return "", err
	}
	var candidates []string
	for _, n := range names {
		candidates = append(candidates, "refs/heads/"+n, "refs/remotes/origin/"+n)
	}
	candidates = append(candidates, "refs/heads/main", "refs/remotes/origin/main", "refs/heads/master", "refs/remotes/origin/master")
	out, err := gitQuery(project, append([]string{"for-each-ref", "--format=%(refname)"}, candidates...)...)
	if err != nil {
		return "", err
	}
	have := map[string]bool{}
	for _, ref := range strings.Split(out, "\n") {
		have[ref] = true
	}
	for _, ref := range candidates {
		if have[ref] {
			return ref, nil
		}
	}
	return "", fmt.Errorf("%s: no integration branch (%s) and no trunk (main, master)", project, strings.Join(names, ", "))
}

// ShortRef is a branch's full ref as people name it: dev, origin/dev.
func ShortRef(ref string) string {
	if s, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		return s
	}
	return strings.TrimPrefix(ref, "refs/remotes/")
}

// integrationRef is the full ref of wt's integration branch: the one its
// record names, else what findIntegration finds.
func integrationRef(wt tree.Worktree, find func() (string, error)) (string, error) {
	if wt.Integration != "" {
		return model.BranchRef(wt.Integration), nil
	}
	return find()
}

// gitQuery is git (git.go) for questions: bounded by statusTimeout, and
// with GIT_OPTIONAL_LOCKS=0 so that git status does not take the index lock
// to refresh it, which would make an agent's own commit fail.
func gitQuery(dir string, args ...string) (string, error) {
	return tree.RunGit(StatusTimeout, []string{"GIT_OPTIONAL_LOCKS=0"}, dir, args...)
}
