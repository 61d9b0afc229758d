package workers

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

func TestExpandIsOnePassAndKeepsWords(t *testing.T) {
	p := proc.Placeholders{Plan: "/p/in-progress/x.md", Slug: "{agent_id}", AgentID: "a b", Port: 4101}
	got := p.Expand([]string{"{plan}", "--slug={slug}", "{agent_id}", "{port}{port}", "{base_url}", "{nope}"})
	want := []string{"/p/in-progress/x.md", "--slug={agent_id}", "a b", "41014101", "", "{nope}"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	env := strings.Join(p.Env(), "\n")
	for _, kv := range []string{"FLEET_PLAN=/p/in-progress/x.md", "FLEET_PORT=4101", "FLEET_AGENT_ID=a b", "FLEET_BASE_URL="} {
		if !strings.Contains(env, kv) {
			t.Errorf("env lacks %s:\n%s", kv, env)
		}
	}
}

func TestCheckExecutor(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "bin", "agent")
	os.MkdirAll(filepath.Dir(script), 0o755)
	testkit.WriteScript(t, script, "#!/bin/sh\n")
	os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644)
	if argv, err := proc.CheckExecutor([]string{"./bin/agent", "{plan}"}, dir); err != nil || argv[0] != script {
		t.Errorf("relative script: %q %v", argv, err)
	}
	if argv, err := proc.CheckExecutor([]string{"sh", "-c"}, dir); err != nil || !filepath.IsAbs(argv[0]) {
		t.Errorf("PATH lookup: %q %v", argv, err)
	}
	for _, bad := range [][]string{nil, {""}, {"./notes.txt"}, {"./bin"}, {"no-such-prog-x1"}} {
		if _, err := proc.CheckExecutor(bad, dir); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestHealth(t *testing.T) {
	now := time.Now()
	self := look.State{PID: os.Getpid(), Host: look.Hostname(), State: look.StateRunning, HeartbeatEvery: 10, LastHeartbeat: look.Stamp{Time: now.Add(-5 * time.Second)}}
	if h := self.Health(now); h != look.Live {
		t.Errorf("fresh heartbeat: %s", h)
	}
	self.LastHeartbeat = look.Stamp{Time: now.Add(-25 * time.Second)}
	if h := self.Health(now); h != look.Stale {
		t.Errorf("two intervals silent: %s", h)
	}
	gone := self
	gone.PID = 1 << 30
	if h := gone.Health(now); h != look.Dead {
		t.Errorf("pid gone: %s", h)
	}
	gone.Host = "elsewhere"
	if h := gone.Health(now); h != look.Stale {
		t.Errorf("another host's pid is not checked: %s", h)
	}
	self.State = look.StateExited
	if h := self.Health(now); h != look.Exited {
		t.Errorf("exited: %s", h)
	}
}

func TestLogSplitsLinesAndStamps(t *testing.T) {
	dir := t.TempDir()
	l, err := look.OpenLog(dir, "a/b", nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC) }
	w := l.Writer(look.StreamOut)
	w.Write([]byte("one\r\ntw"))
	w.Write([]byte("o\nthree"))
	w.Flush()
	l.Printf("done %d", 1)
	l.Close()
	data, _ := os.ReadFile(look.LogPath(dir, "a/b"))
	want := "2026-01-02T03:04:05.006Z out one\n2026-01-02T03:04:05.006Z out two\n2026-01-02T03:04:05.006Z out three\n2026-01-02T03:04:05.006Z fleet done 1\n"
	if string(data) != want {
		t.Errorf("log:\n%s\nwant:\n%s", data, want)
	}
	if filepath.Base(look.LogPath(dir, "a/b")) != "a-b.log" {
		t.Errorf("log name: %s", look.LogPath(dir, "a/b"))
	}
}

func TestRunNoticesATakenPlanWithinAPulse(t *testing.T) {
	defer func(old time.Duration) { maxHeartbeat = old }(maxHeartbeat)
	maxHeartbeat = 50 * time.Millisecond
	dir := t.TempDir()
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ".plans", "features", "a.md"), []byte("# A\n"), 0o644)
	tr, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := tr.Claim("features/a.md", "w1", 600)
	if err != nil {
		t.Fatal(err)
	}
	d := &Driver{Tree: tr, Worker: model.Worker{AgentID: "w1"}, Argv: []string{"sleep", "30"}, TTL: 600, Grace: time.Second}
	if err := d.Start(nil); err != nil {
		t.Fatal(err)
	}
	defer d.Finish(2, "test")
	go func() {
		time.Sleep(200 * time.Millisecond)
		tr.Release(rel, planfs.Actor{AgentID: "operator", Force: true})
	}()
	start := time.Now()
	o := d.Run(context.Background(), Job{Rel: rel})
	// The lease renews only every 200 s; the pulse reads it every 50 ms.
	if o.Lost == "" || time.Since(start) > 10*time.Second {
		t.Fatalf("outcome %+v after %v", o, time.Since(start))
	}
}
