//go:build linux

package boundarytest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// endpoint writes dir/endpoints.yaml with one endpoint, local, running
// argv, plus extra fields.
func endpoint(t *testing.T, dir string, extra string, argv ...string) {
	t.Helper()
	q, _ := json.Marshal(argv)
	text := "endpoints:\n  - name: local\n    tier: mid\n    model: fake-1\n    command: " + string(q) + "\n" + extra
	if err := os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A run is bounded as a whole: its endpoint's max_processes caps what
// all of its processes together may start, and the driver's log says what
// bounds it.
func TestRunIsBoundedAsAWhole(t *testing.T) {
	fwtest.NeedCgroup(t)
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"})
	endpoint(t, dir, "    max_processes: 40\n", intruder(t), fwtest.Exe(t), "procs", "200")
	r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--endpoint", "local", "--agent-id", "w1", "--slug", "x")
	log, _ := os.ReadFile(look.LogPath(dir, "w1"))
	if r.Code != 0 {
		t.Fatalf("the run: %v\nlog:\n%s", r, log)
	}
	m := regexp.MustCompile(`started (\d+) of 200`).FindStringSubmatch(string(log))
	if m == nil {
		t.Fatalf("the agent did not say how many it started:\n%s", log)
	}
	if n, _ := strconv.Atoi(m[1]); n >= 40 {
		t.Errorf("the agent started %d processes under max_processes: 40", n)
	}
	wantDenied(t, string(log), "fork-bomb")
	if !strings.Contains(string(log), "40 processes") || !strings.Contains(string(log), "GiB of memory") {
		t.Errorf("the log does not say what bounds the run:\n%s", log)
	}
}

// A pause freezes the whole run: a helper the agent started in a session
// of its own, sending it SIGCONT all the while, cannot wake it (a stopped
// process group could be).
func TestPauseFreezesTheWholeRun(t *testing.T) {
	fwtest.NeedCgroup(t)
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"})
	fwtest.WithExecutor(t, dir, intruder(t), fwtest.Exe(t), "pause")
	driver := fwtest.Cmd(dir, nil, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1", "--slug", "x")
	if err := driver.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() {
		err := driver.Wait()
		done <- err
		done <- err
	}()
	defer func() {
		driver.Process.Kill()
		<-done
	}()
	var counter string
	fwtest.WaitFor(t, "the agent counting", 30*time.Second, func() bool {
		if _, err := os.Stat(filepath.Join(dir, "var", "fleet", "workers", "w1.json")); err != nil {
			return false
		}
		st := fwtest.StateOf(t, dir, "w1")
		if st.Worktree == "" || st.Agent == nil {
			return false
		}
		counter = filepath.Join(st.Worktree, "counter")
		data, _ := os.ReadFile(counter)
		n, _ := strconv.Atoi(string(data))
		return n > 5
	})
	if r := fwtest.Run(t, dir, "worker", "pause", "w1", "--root", dir); r.Code != 0 {
		t.Fatalf("pause: %v", r)
	}
	fwtest.WaitFor(t, "the agent held paused", 10*time.Second, func() bool {
		st := fwtest.StateOf(t, dir, "w1")
		return st.Paused != "" && st.Agent != nil && testkit.Paused(st.Agent.PID)
	})
	before, _ := os.ReadFile(counter)
	time.Sleep(700 * time.Millisecond)
	after, _ := os.ReadFile(counter)
	if string(before) != string(after) {
		t.Errorf("the paused agent counted on from %s to %s: its helper woke it", before, after)
	}
	if r := fwtest.Run(t, dir, "worker", "resume", "w1", "--root", dir); r.Code != 0 {
		t.Fatalf("resume: %v", r)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(counter), "done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		log, _ := os.ReadFile(look.LogPath(dir, "w1"))
		if err != nil {
			t.Fatalf("the driver: %v\nlog:\n%s", err, log)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the driver did not finish after the resume")
	}
}

// The person's verbs are refused to a process an agent started, even one
// in a session of its own with nothing of the agent in its environment,
// and even where agents are not contained.
func TestGateKnowsAnAgentByWhatItCannotShed(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"off", "auto"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "auto" {
				fwtest.NeedLandlock(t, 0)
			}
			t.Parallel()
			dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"}, fwtest.Plan{Rel: "review-needed/other.md"})
			if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("sandbox: "+mode+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			fwtest.WithExecutor(t, dir, intruder(t), fwtest.Exe(t), "gate")
			r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1", "--slug", "x")
			log, _ := os.ReadFile(look.LogPath(dir, "w1"))
			if r.Code != 0 {
				t.Fatalf("the run: %v\nlog:\n%s", r, log)
			}
			wantDenied(t, string(log), "budget-extend", "approve")
			for _, want := range []string{"a person extends a budget", "a person's verb"} {
				if !strings.Contains(string(log), want) {
					t.Errorf("the log lacks %q:\n%s", want, log)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "var", "fleet", "usage", "extensions.jsonl")); err == nil {
				t.Errorf("an extension was recorded")
			}
		})
	}
}
