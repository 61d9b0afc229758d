package demo

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// fleet writes endpoints.yaml with executor, and the state files and logs
// of the workers the demo's story has had.
func (b *builder) fleet(executor []string) {
	if b.err != nil {
		return
	}
	b.writeEndpoints(executor)
	b.writeWorkers()
}

// writeEndpoints writes the demo's endpoints.yaml, with executor as the
// stand-in agent every endpoint runs.
func (b *builder) writeEndpoints(executor []string) {
	// The sample's endpoints.yaml names three endpoints, one per common
	// tier, and ends where the executor line goes.
	head, err := sampleText("project/endpoints.yaml")
	if err != nil {
		b.fail("endpoints.yaml", err)
		return
	}
	var y strings.Builder
	y.WriteString(head + "executor: [")
	for i, a := range append(append([]string{}, executor...), "{plan}") {
		q, _ := json.Marshal(a)
		if i > 0 {
			y.WriteString(", ")
		}
		y.Write(q)
	}
	y.WriteString("]\n")
	b.fail("endpoints.yaml", os.WriteFile(filepath.Join(b.project, "endpoints.yaml"), []byte(y.String()), 0o644))
}

// writeWorkers writes the state files and logs of three workers: one live,
// one dead holding a claim, one that finished.
func (b *builder) writeWorkers() {
	// Ports as a driver gets them: the lowest free ones, so the Worktrees
	// pane and the state files agree.
	port := func(agent string) int {
		p, err := look.AssignPort(b.project, agent, look.DefaultPorts)
		b.fail("port for "+agent, err)
		return p
	}
	midPort, smallPort, reasonerPort := port("mid-1"), port("small-2"), port("reasoner-1")
	host, _ := os.Hostname()
	wt := func(agent string) string { return filepath.Join(b.project, "var", "worktrees", agent) }
	exit0 := 0
	at := func(ago time.Duration) look.Stamp { return look.Stamp{Time: b.now.Add(-ago)} }
	ask := *askTidy
	ask.Since = float64(b.now.Add(-time.Minute).UnixNano()) / 1e9
	states := []struct {
		look.State
		log []logLine
	}{
		{look.State{
			PID: 48213, Host: "build-box", AgentID: "mid-1", Tier: "mid", Model: "sonnet", Endpoint: "box-mid",
			Plan: "in-progress/duplicate-tags-by-case.md", Worktree: wt("mid-1"), Port: midPort,
			Started: at(10 * time.Minute), LastHeartbeat: at(time.Minute), State: look.StateRunning,
			HeartbeatEvery: 1200, Note: "waiting for input: " + askTidy.Question,
			// A conversation whose agent asks before it runs a command:
			// the Workers pane and the inbox show it waiting for input.
			Asking: &ask, Agent: &look.Proc{PID: 48230},
		}, []logLine{
			{10 * time.Minute, look.StreamFleet, "claimed in-progress/duplicate-tags-by-case.md"},
			{10 * time.Minute, look.StreamFleet, fmt.Sprintf("run claude -p %q in %s (port %d)", "{plan}", wt("mid-1"), midPort)},
			{9 * time.Minute, look.StreamOut, "Reading the plan: Tags differ only by case"},
			{8 * time.Minute, look.StreamOut, "Found tag handling in notes.go: Store.Add keeps tags as typed"},
			{6 * time.Minute, look.StreamOut, "Writing a failing test: TestTagsFoldCase"},
			{3 * time.Minute, look.StreamOut, "Normalising tags with strings.ToLower before de-duplicating"},
			{time.Minute, look.StreamOut, "go test ./... (1 package)"},
			{time.Minute, look.StreamFleet, "the agent asks (perm-1): " + askTidy.Question},
		}},
		{look.State{
			PID: deadPID(), Host: host, AgentID: "small-2", Tier: "small", Model: "qwen3-8b", Endpoint: "laptop-small",
			Plan: "in-progress/crash-on-empty-title.md", Worktree: wt("small-2"), Port: smallPort,
			Started: at(2 * time.Hour), LastHeartbeat: at(2 * time.Hour), State: look.StateRunning,
			HeartbeatEvery: 1200, Note: "running opencode",
		}, []logLine{
			{2 * time.Hour, look.StreamFleet, "claimed in-progress/crash-on-empty-title.md"},
			{2 * time.Hour, look.StreamFleet, fmt.Sprintf("run opencode run %q in %s (port %d)", "{plan}", wt("small-2"), smallPort)},
			{118 * time.Minute, look.StreamOut, "Looking at notes.go"},
			{116 * time.Minute, look.StreamOut, "Adding a TODO where empty titles should be rejected"},
			{115 * time.Minute, look.StreamErr, "error: context window exceeded"},
		}},
		{look.State{
			PID: 31877, Host: host, AgentID: "reasoner-1", Tier: "reasoner", Model: "opus", Endpoint: "cloud-reasoner",
			Plan: "in-progress/csv-import.md", Worktree: wt("reasoner-1"), Port: reasonerPort,
			Started: at(2 * 24 * time.Hour), LastHeartbeat: at(2*24*time.Hour - 5*time.Hour), State: look.StateExited,
			ExitCode: &exit0, HeartbeatEvery: 1200, Note: "agent exited 0; review-needed/csv-import.md waits for review",
		}, []logLine{
			{48 * time.Hour, look.StreamFleet, "claimed in-progress/csv-import.md"},
			{47 * time.Hour, look.StreamOut, "Parsing CSV with encoding/csv; a header row names the fields"},
			{44 * time.Hour, look.StreamOut, "12 tests pass"},
			{43 * time.Hour, look.StreamFleet, "agent exited 0; review-needed/csv-import.md waits for review"},
			{43 * time.Hour, look.StreamFleet, "exit 0: worked 1 plan(s)"},
		}},
	}
	for _, s := range states {
		b.fail("state file", look.WriteState(b.project, s.State))
		var text strings.Builder
		for _, l := range s.log {
			text.WriteString(look.LogLine(b.now.Add(-l.ago), l.stream, l.text))
		}
		p := look.LogPath(b.project, s.AgentID)
		b.fail("worker log", os.MkdirAll(filepath.Dir(p), 0o755))
		b.fail("worker log", os.WriteFile(p, []byte(text.String()), 0o644))
	}
}

// askTidy is the permission request mid-1's run waits on.
var askTidy = &claims.AskRecord{ID: "perm-1", Question: "Run `go mod tidy`?",
	Options: []claims.AskOption{{ID: "allow-once", Label: "Allow once", Allow: true}, {ID: "allow-always", Label: "Always allow", Allow: true},
		{ID: "reject", Label: "Reject"}}}

type logLine struct {
	ago          time.Duration
	stream, text string
}

// deadPID is the pid of a process that has exited: small-2's worker died.
func deadPID() int {
	cmd := exec.Command("true")
	if cmd.Run() != nil {
		return 0
	}
	return cmd.Process.Pid
}
