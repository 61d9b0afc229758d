package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// inbox lists a run waiting for input after the paused runs, with the
// command that answers it; --json carries the question and its options.
// A dead driver's question is not listed: it went with the driver.
func TestInboxListsRunsWaitingForInput(t *testing.T) {
	dir := fwtest.NewTree(t)
	now := time.Now()
	running := func(agent, plan string, pid int) look.State {
		return look.State{PID: pid, AgentID: agent, Plan: plan, Host: look.Hostname(), State: look.StateRunning,
			Started: look.Stamp{Time: now.Add(-time.Hour)}, LastHeartbeat: look.Stamp{Time: now}, HeartbeatEvery: 30}
	}
	paused := running("w-paused", "in-progress/slow.md", os.Getpid())
	paused.Paused, paused.PausedAt = "paused by operator-ann", look.Stamp{Time: now.Add(-time.Minute)}
	perm := running("w-perm", "in-progress/deploy.md", os.Getpid())
	perm.Asking = &claims.AskRecord{ID: "p1", Question: "Run make deploy?\x1b[2J", Since: float64(now.Add(-2 * time.Minute).Unix()),
		Options: []claims.AskOption{{ID: "ok", Label: "Allow", Allow: true}, {ID: "no", Label: "Reject"}}}
	words := running("w-words", "in-progress/db.md", os.Getpid())
	words.Asking = &claims.AskRecord{ID: "q1", Question: "Which database?", Since: float64(now.Unix())}
	gone := running("w-gone", "in-progress/gone.md", 1<<22-1) // no such process
	gone.Asking = &claims.AskRecord{ID: "q9", Question: "Anyone?"}
	for _, st := range []look.State{paused, perm, words, gone} {
		if err := look.WriteState(dir, st); err != nil {
			t.Fatal(err)
		}
	}
	r := fwtest.Run(t, dir, "inbox", "--root", dir)
	fwtest.Want(t, r, 0)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "slow ") {
		t.Fatalf("inbox:\n%s", r.Stdout)
	}
	for i, want := range []string{"deploy  w-perm   -  waiting for input: Run make deploy??[2J  2m  fleetwatch answer w-perm --allow|--deny|--option ID",
		"db      w-words  -  waiting for input: Which database?"} {
		if got := strings.Join(strings.Fields(lines[i+2]), " "); !strings.Contains(got, strings.Join(strings.Fields(want), " ")) {
			t.Errorf("row %d: %q, want %q", i+2, lines[i+2], want)
		}
	}
	if !strings.Contains(lines[3], "fleetwatch answer w-words TEXT") || strings.Contains(r.Stdout, "w-gone") || strings.Contains(r.Stdout, "\x1b") {
		t.Errorf("inbox:\n%s", r.Stdout)
	}

	r = fwtest.Run(t, dir, "inbox", "--root", dir, "--json")
	fwtest.Want(t, r, 0)
	var got []struct {
		Kind, State, Answer string
		AgentID             string            `json:"agent_id"`
		Asking              *claims.AskRecord `json:"asking"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil {
		t.Fatalf("%v:\n%s", err, r.Stdout)
	}
	if len(got) != 3 || got[0].Kind != "paused" || got[1].Kind != "asking" || got[1].AgentID != "w-perm" || got[1].State != "waiting for input" ||
		got[1].Asking == nil || got[1].Asking.ID != "p1" || len(got[1].Asking.Options) != 2 || !got[1].Asking.Options[0].Allow ||
		got[2].Answer != "fleetwatch answer w-words TEXT" {
		t.Fatalf("inbox --json: %+v", got)
	}
}
