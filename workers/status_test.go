package workers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/seat"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

func inspectOne(t *testing.T, project string, wt tree.Worktree) look.WorktreeState {
	t.Helper()
	got := look.Inspect(project, []tree.Worktree{wt})
	if len(got) != 1 || got[0].Worktree != wt {
		t.Fatalf("Inspect returned %+v for %+v", got, wt)
	}
	return got[0]
}

func TestInspect(t *testing.T) {
	dir := testkit.Repo(t)
	wt, err := seat.Ensure(dir, "mid-1", "")
	if err != nil {
		t.Fatal(err)
	}
	want := func(what string, st look.WorktreeState, dirty bool, ahead, behind int, head string) {
		t.Helper()
		if !st.Exists || st.Err != "" || st.Dirty != dirty || st.Ahead != ahead || st.Behind != behind || st.Head != head {
			t.Fatalf("%s: %+v, want dirty %v, ahead %d, behind %d, head %q", what, st, dirty, ahead, behind, head)
		}
	}
	want("fresh", inspectOne(t, dir, wt), false, 0, 0, "agent/mid-1")

	os.WriteFile(filepath.Join(wt.Path, "new.txt"), []byte("x\n"), 0o644)
	want("untracked file", inspectOne(t, dir, wt), true, 0, 0, "agent/mid-1")
	testkit.Git(t, wt.Path, "add", "new.txt")
	want("staged file", inspectOne(t, dir, wt), true, 0, 0, "agent/mid-1")
	testkit.Git(t, wt.Path, "commit", "-q", "-m", "work")
	want("a commit", inspectOne(t, dir, wt), false, 1, 0, "agent/mid-1")

	// The integration branch moves on: a commit on dev made in the project.
	testkit.Git(t, dir, "checkout", "-q", "dev")
	os.WriteFile(filepath.Join(dir, "other.txt"), []byte("y\n"), 0o644)
	testkit.Git(t, dir, "add", "other.txt")
	testkit.Git(t, dir, "commit", "-q", "-m", "other")
	testkit.Git(t, dir, "checkout", "-q", "main")
	want("dev ahead", inspectOne(t, dir, wt), false, 1, 1, "agent/mid-1")

	// No integration recorded: found as EnsureIntegration would, made nowhere.
	bare := wt
	bare.Integration = ""
	branches := testkit.Git(t, dir, "branch", "--list")
	want("integration found", inspectOne(t, dir, bare), false, 1, 1, "agent/mid-1")
	if again := testkit.Git(t, dir, "branch", "--list"); again != branches {
		t.Fatalf("Inspect changed branches:\n%s\nto\n%s", branches, again)
	}

	testkit.Git(t, wt.Path, "checkout", "-q", "--detach")
	sha := testkit.Git(t, wt.Path, "rev-parse", "HEAD")
	want("detached", inspectOne(t, dir, wt), false, 1, 1, sha[:7])
}

func TestInspectProblems(t *testing.T) {
	dir := testkit.Repo(t)
	wt, err := seat.Ensure(dir, "mid-1", "")
	if err != nil {
		t.Fatal(err)
	}
	gone := wt
	gone.AgentID, gone.Path = "gone", filepath.Join(dir, "var", "worktrees", "gone")
	file := wt
	file.AgentID, file.Path = "file", filepath.Join(dir, "README")
	badBase := wt
	badBase.Integration = "no-such-branch"
	notGit := wt
	notGit.AgentID, notGit.Path = "not-git", t.TempDir()

	got := look.Inspect(dir, []tree.Worktree{gone, file, badBase, notGit, wt})
	for i, st := range got[:2] {
		if st.Exists || st.Err != "" || st.Dirty || st.Head != "" {
			t.Errorf("missing path %d: %+v", i, st)
		}
	}
	for _, st := range got[2:4] {
		if !st.Exists || st.Err == "" || strings.Contains(st.Err, "\n") || st.Dirty || st.Head != "" || st.Ahead != 0 {
			t.Errorf("git failure for %s: %+v", st.AgentID, st)
		}
	}
	t.Logf("errors: %q, %q", got[2].Err, got[3].Err)
	if !strings.HasPrefix(got[2].Err, "git rev-list: ") || !strings.HasPrefix(got[3].Err, "git status: ") {
		t.Errorf("errors do not say which git failed: %q, %q", got[2].Err, got[3].Err)
	}
	if st := got[4]; st.Err != "" || st.Head != "agent/mid-1" {
		t.Errorf("a good worktree beside bad ones: %+v", st)
	}

	// Without any integration branch or trunk there is nothing to compare.
	testkit.Git(t, dir, "branch", "-m", "dev", "old-dev")
	testkit.Git(t, dir, "branch", "-m", "main", "trunk")
	bare := wt
	bare.Integration = ""
	if st := inspectOne(t, dir, bare); !strings.Contains(st.Err, "no integration branch") {
		t.Errorf("no integration branch: %+v", st)
	}
}

func TestInspectGitCalls(t *testing.T) {
	dir := testkit.Repo(t)
	var wts []tree.Worktree
	for _, id := range []string{"a", "b", "c"} {
		wt, err := seat.Ensure(dir, id, "")
		if err != nil {
			t.Fatal(err)
		}
		wt.Integration = ""
		wts = append(wts, wt)
	}
	runs := testkit.GitRuns(t, func() { look.Inspect(dir, wts) })
	// Two per worktree, and one lookup of the integration branch they share.
	if runs != 2*len(wts)+1 {
		t.Fatalf("%d git runs for %d worktrees", runs, len(wts))
	}
}

// A git that never answers costs the timeout, not the screen.
func TestInspectTimesOut(t *testing.T) {
	dir := testkit.Repo(t)
	wt, err := seat.Ensure(dir, "mid-1", "")
	if err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { look.StatusTimeout = d }(look.StatusTimeout)
	look.StatusTimeout = 200 * time.Millisecond
	bin := t.TempDir()
	// Not exec: the sleeping child keeps git's pipes open after git is killed.
	testkit.WriteScript(t, filepath.Join(bin, "git"), "#!/bin/sh\nsleep 5\n")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	start := time.Now()
	st := inspectOne(t, dir, wt)
	took := time.Since(start)
	if !strings.Contains(st.Err, "no answer within 200ms") || took > 3*time.Second {
		t.Fatalf("after %v: %+v", took, st)
	}
}
