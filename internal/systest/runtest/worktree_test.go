package runtest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// freePorts finds n consecutive ports nothing listens on, as LO-HI.
func freePorts(t *testing.T, n int) (int, string) {
	t.Helper()
	for range 100 {
		lo := 20000 + rand.IntN(10000)
		ok := true
		for p := lo; p < lo+n && ok; p++ {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if ok = err == nil; ok {
				l.Close()
			}
		}
		if ok {
			return lo, fmt.Sprintf("%d-%d", lo, lo+n-1)
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0, ""
}

// TestWorktreeCommands runs each worktree subcommand as anchor's users do:
// KEY=value lines, a table, a path, and exit 0 ok, 1 missing, 2 error.
func TestWorktreeCommands(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitRepo(t)
	lo, ports := freePorts(t, 4)
	wantLines := func(r fwtest.Result, want ...string) {
		t.Helper()
		if r.Code != 0 || r.Stdout != strings.Join(want, "\n")+"\n" || r.Stderr != "" {
			t.Fatalf("%v\nwant stdout:\n%s", r, strings.Join(want, "\n"))
		}
	}
	mid := filepath.Join(dir, "var", "worktrees", "mid-1")
	// --project defaults to the git top level of the current folder.
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	wantLines(fwtest.Run(t, filepath.Join(dir, "sub"), "worktree", "ensure", "--agent-id", "mid 1", "--slug", "fix-login", "--port-range", ports),
		"WORKTREE="+mid, "BRANCH=feature/fix-login", "INTEGRATION=dev", "AGENT_ID=mid 1", "PROJECT="+dir, "PORT="+strconv.Itoa(lo))
	// Stable: the same port again, and the next agent gets the next one.
	r := fwtest.Run(t, dir, "worktree", "ensure", "--agent-id", "mid 1", "--port-range", ports)
	if !strings.Contains(r.Stdout, "PORT="+strconv.Itoa(lo)+"\n") {
		t.Fatalf("second ensure: %v", r)
	}
	small := filepath.Join(dir, "var", "worktrees", "small-2")
	r = fwtest.Run(t, t.TempDir(), "worktree", "ensure", "--project", dir, "--agent-id", "small-2", "--port-range", ports)
	if r.Code != 0 || !strings.Contains(r.Stdout, "BRANCH=agent/small-2\n") || !strings.Contains(r.Stdout, "PORT="+strconv.Itoa(lo+1)+"\n") {
		t.Fatalf("small-2: %v", r)
	}

	wantLines(fwtest.Run(t, dir, "worktree", "list"),
		"AGENT_ID  BRANCH             PORT   PATH",
		"mid 1     feature/fix-login  "+strconv.Itoa(lo)+"  "+mid,
		"small-2   agent/small-2      "+strconv.Itoa(lo+1)+"  "+small)
	wantLines(fwtest.Run(t, dir, "worktree", "path", "--agent-id", "small-2"), small)
	if r := fwtest.Run(t, dir, "worktree", "path", "--agent-id", "nobody"); r.Code != 1 || r.Stdout != "" || r.Stderr != "fleetwatch: worktree path: no worktree for agent \"nobody\"\n" {
		t.Fatalf("path of nobody: %v", r)
	}

	// remove refuses to lose work, one line naming the worktree.
	os.WriteFile(filepath.Join(mid, "notes.txt"), []byte("x"), 0o644)
	r = fwtest.Run(t, dir, "worktree", "remove", "--agent-id", "mid 1", "--delete-branch")
	if r.Code != 2 || !strings.Contains(r.Stderr, mid+": 1 uncommitted change (1 untracked file) would be lost") || strings.Count(r.Stderr, "\n") != 1 {
		t.Fatalf("dirty remove: %v", r)
	}
	testkit.Git(t, mid, "add", "notes.txt")
	testkit.Git(t, mid, "commit", "-q", "-m", "notes")
	r = fwtest.Run(t, dir, "worktree", "remove", "--agent-id", "mid 1", "--delete-branch")
	if r.Code != 2 || r.Stderr != "fleetwatch: worktree remove: "+mid+": 1 commit on feature/fix-login not in dev; --force removes the worktree but keeps the branch\n" {
		t.Fatalf("unmerged remove: %v", r)
	}
	r = fwtest.Run(t, dir, "worktree", "remove", "--agent-id", "mid 1", "--delete-branch", "--force")
	if r.Code != 0 || r.Stdout != "removed worktree "+mid+" for agent_id=mid 1\nfreed port "+strconv.Itoa(lo)+"\n" ||
		r.Stderr != "fleetwatch: worktree remove: kept feature/fix-login: 1 commit not in dev\n" {
		t.Fatalf("forced remove: %v", r)
	}
	wantLines(fwtest.Run(t, dir, "worktree", "remove", "--agent-id", "small-2", "--delete-branch"),
		"removed worktree "+small+" for agent_id=small-2", "deleted branch agent/small-2", "freed port "+strconv.Itoa(lo+1))
	if r := fwtest.Run(t, dir, "worktree", "remove", "--agent-id", "small-2"); r.Code != 1 || !strings.Contains(r.Stderr, "nothing to remove") {
		t.Fatalf("remove twice: %v", r)
	}
	if r := fwtest.Run(t, dir, "worktree", "list"); r.Code != 1 || r.Stdout != "(no agent worktrees registered)\n" {
		t.Fatalf("empty list: %v", r)
	}
	wantLines(fwtest.Run(t, dir, "worktree", "ensure-integration"), "INTEGRATION=dev", "CREATED=no")
	other := fwtest.GitRepo(t)
	wantLines(fwtest.Run(t, other, "worktree", "ensure-integration"), "INTEGRATION=dev", "CREATED=yes")
	// Without origin, --push-integration warns and the branch still works.
	r = fwtest.Run(t, other, "worktree", "ensure-integration", "--push-integration")
	if r.Code != 0 || r.Stdout != "INTEGRATION=dev\nCREATED=no\n" || !strings.Contains(r.Stderr, "warning: --push-integration: no origin remote") {
		t.Fatalf("push without origin: %v", r)
	}
}

// --push-integration pushes dev to origin when origin lacks it.
func TestWorktreePushIntegration(t *testing.T) {
	t.Parallel()
	origin := t.TempDir()
	testkit.Git(t, origin, "init", "-q", "--bare")
	dir := fwtest.GitRepo(t)
	testkit.Git(t, dir, "remote", "add", "origin", origin)
	_, ports := freePorts(t, 1)
	r := fwtest.Run(t, dir, "worktree", "ensure", "--agent-id", "a", "--push-integration", "--port-range", ports)
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("%v", r)
	}
	testkit.Git(t, origin, "rev-parse", "--verify", "refs/heads/dev")
}

// Bad input is one line naming the flag, exit 2; -h is exit 0.
func TestWorktreeBadInput(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitRepo(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"worktree", "bogus"}, `unknown subcommand "bogus" (want ensure, list, path, remove or ensure-integration)`},
		{[]string{"worktree", "ensure"}, "worktree ensure: --agent-id is required"},
		{[]string{"worktree", "ensure", "--agent-id", " "}, "--agent-id is required"},
		{[]string{"worktree", "path"}, "worktree path: --agent-id is required"},
		{[]string{"worktree", "remove"}, "worktree remove: --agent-id is required"},
		{[]string{"worktree", "ensure", "--agent-id", "a", "--port-range", "5000-4000"}, "--port-range: port range 5000-4000 is reversed"},
		{[]string{"worktree", "ensure", "--agent-id", "a", "--port-range", "0-99999"}, "--port-range: port range 0-99999: ports run from 1 to 65535"},
		{[]string{"worktree", "ensure", "--agent-id", "a", "--port-range", "lots"}, `--port-range: port range "lots": want LO-HI`},
		{[]string{"worktree", "list", "--frob"}, "worktree list: flag provided but not defined: -frob"},
		{[]string{"worktree", "list", "extra"}, `worktree list: unexpected argument "extra"`},
		{[]string{"worktree", "list", "--project", filepath.Join(dir, "missing")}, "worktree list: --project: "},
	} {
		r := fwtest.Run(t, dir, c.args...)
		if r.Code != 2 || !strings.HasPrefix(r.Stderr, "fleetwatch: ") || !strings.Contains(r.Stderr, c.want) || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("%v: %v\nwant one line with %q", c.args, r, c.want)
		}
	}
	if r := fwtest.Run(t, t.TempDir(), "worktree", "list"); r.Code != 2 || !strings.Contains(r.Stderr, "not in a git repository (--project names one)") {
		t.Errorf("outside git: %v", r)
	}
	if r := fwtest.Run(t, dir, "worktree"); r.Code != 2 || !strings.Contains(r.Stderr, "usage: fleetwatch worktree") {
		t.Errorf("no subcommand: %v", r)
	}
	for _, args := range [][]string{{"worktree", "--help"}, {"worktree", "ensure", "--help"}, {"worktree", "remove", "-h"}} {
		if r := fwtest.Run(t, dir, args...); r.Code != 0 || !strings.Contains(r.Stdout, "usage: fleetwatch worktree") {
			t.Errorf("%v: %v", args, r)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "var")); err == nil {
		t.Error("bad input created var/")
	}
}

// TestWorktreeEnsurePortsRace starts 16 fleetwatch processes together,
// each ensuring its own agent's worktree: all succeed, and no two share a
// port or a worktree.
func TestWorktreeEnsurePortsRace(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitRepo(t)
	const n = 16
	lo, ports := freePorts(t, n+4)
	barrier := filepath.Join(t.TempDir(), "go")
	results := make([]fwtest.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i] = fwtest.RunEnv(t, dir, []string{fwtest.BarrierEnv + "=" + barrier},
				"worktree", "ensure", "--agent-id", fmt.Sprintf("racer-%02d", i), "--port-range", ports)
		})
	}
	fwtest.OpenBarrier(t, barrier, n)
	wg.Wait()
	seen := map[string]int{}
	for i, r := range results {
		port := ""
		for _, line := range strings.Split(r.Stdout, "\n") {
			port = strings.TrimPrefix(line, "PORT=")
			if port != line {
				break
			}
		}
		p, err := strconv.Atoi(port)
		if r.Code != 0 || err != nil || p < lo || p >= lo+n+4 {
			t.Fatalf("racer %d: %v", i, r)
		}
		if j, dup := seen[port]; dup {
			t.Fatalf("racers %d and %d share port %s", j, i, port)
		}
		seen[port] = i
	}
	r := fwtest.Run(t, dir, "worktree", "list")
	if r.Code != 0 || strings.Count(r.Stdout, "\n") != n+1 {
		t.Fatalf("list after the race: %v", r)
	}
}
